/*
 * hitforge's stand-in for MTurk's externalHIT_v1.js.
 *
 * HTMLQuestion pages load https://s3.amazonaws.com/mturk-public/externalHIT_v1.js;
 * hitforge serves this file instead. As on MTurk, turkSetAssignmentID() fills the
 * form's assignmentId from the frame URL and, in preview, disables the submit
 * button. It also points the form at this site's /mturk/externalSubmit and adds
 * the signed token that identifies the worker: the sandboxed frame sends no cookies.
 */
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.search);
  var NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE";

  function turkGetParam(name, defaultValue) {
    return params.has(name) ? params.get(name) : defaultValue;
  }

  function hidden(form, name, value) {
    var field = form.querySelector('input[name="' + name + '"]');
    if (!field) {
      field = document.createElement("input");
      field.type = "hidden";
      field.name = name;
      form.appendChild(field);
    }
    field.value = value;
  }

  function submitForms() {
    var found = [];
    var forms = document.getElementsByTagName("form");
    for (var i = 0; i < forms.length; i++) {
      var form = forms[i];
      var action = form.getAttribute("action") || "";
      if (form.id === "mturk_form" || form.getAttribute("name") === "mturk_form" ||
          action.indexOf("/mturk/externalSubmit") !== -1) {
        found.push(form);
      }
    }
    return found;
  }

  function turkSetAssignmentID() {
    var assignmentId = turkGetParam("assignmentId", "");
    var field = document.getElementById("assignmentId");
    if (field) {
      field.value = assignmentId;
    }
    var action = new URL("/mturk/externalSubmit", window.location.href).href;
    submitForms().forEach(function (form) {
      form.action = action;
      form.method = "post";
      hidden(form, "assignmentId", assignmentId);
      hidden(form, "hitforgeToken", turkGetParam("hitforgeToken", ""));
    });
    if (assignmentId === "" || assignmentId === NOT_AVAILABLE) {
      var button = document.getElementById("submitButton");
      if (button) {
        button.disabled = true;
        button.value = "Accept this HIT before submitting your answers.";
      }
    }
  }

  window.turkGetParam = turkGetParam;
  window.turkSetAssignmentID = turkSetAssignmentID;
  // Pages that forget to call it still submit to the right place.
  document.addEventListener("DOMContentLoaded", turkSetAssignmentID);
})();
