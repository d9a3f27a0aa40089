/*
 * hitforge's stand-in for MTurk's externalHIT_v1.js.
 *
 * HTMLQuestion pages load https://s3.amazonaws.com/mturk-public/externalHIT_v1.js;
 * hitforge serves this file instead (an ExternalQuestion page may load it from
 * /static/mturk/ itself). As MTurk's did, turkGetParam() returns a parameter's raw,
 * still URL-encoded text, and turkSetAssignmentID(form_name, button_name) fills the
 * page's #assignmentId from the frame URL, disables the named button in preview, and
 * points the named form (default mturk_form) at externalSubmit. Inside hitforge's
 * HTMLQuestion frame that is this site's /mturk/externalSubmit, with the signed token
 * that identifies the worker (the sandboxed frame sends no cookies); elsewhere it is
 * turkSubmitTo's, as on MTurk.
 */
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.search);
  var NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE";

  /* MTurk's own lookup: the first ?name= or &name= of the URL, undecoded (a page that
   * decodes the value itself must not get it decoded twice). */
  function turkGetParam(name, defaultValue) {
    var results = new RegExp("[?&]" + name + "=([^&#]*)").exec(window.location.href);
    return results == null ? defaultValue : results[1];
  }

  function submitTarget() {
    // hitforge's own frame carries the token and may post only to this site (its CSP).
    var submitTo = params.has("hitforgeToken") ? "" : params.get("turkSubmitTo") || "";
    if (!/^(https?:)?\/\//.test(submitTo)) {
      return new URL("/mturk/externalSubmit", window.location.href).href;
    }
    return submitTo.replace(/\/+$/, "") + "/mturk/externalSubmit";
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

  /* The forms to wire: the one named, and (hitforge's leniency) any mturk_form or form
   * posting to externalSubmit, so a page that names none still submits. */
  function submitForms(formName) {
    var found = [];
    var named = document.getElementById(formName);
    if (named && named.tagName === "FORM") {
      found.push(named);
    }
    var forms = document.getElementsByTagName("form");
    for (var i = 0; i < forms.length; i++) {
      var form = forms[i];
      var action = form.getAttribute("action") || "";
      if (found.indexOf(form) === -1 && (form.id === "mturk_form" || form.getAttribute("name") === "mturk_form" ||
          action.indexOf("/mturk/externalSubmit") !== -1)) {
        found.push(form);
      }
    }
    return found;
  }

  function turkSetAssignmentID(formName, buttonName) {
    formName = typeof formName === "string" ? formName : "mturk_form";
    buttonName = typeof buttonName === "string" ? buttonName : "submitButton";
    var assignmentId = params.get("assignmentId") || "";
    var field = document.getElementById("assignmentId");
    if (field) {
      field.value = assignmentId;
    }
    var action = submitTarget();
    var token = params.get("hitforgeToken");
    submitForms(formName).forEach(function (form) {
      form.action = action;
      form.method = "post";
      hidden(form, "assignmentId", assignmentId);
      if (token !== null) {
        hidden(form, "hitforgeToken", token);
      }
    });
    if (assignmentId === "" || assignmentId === NOT_AVAILABLE) {
      var button = document.getElementById(buttonName);
      if (button) {
        button.disabled = true;
        button.value = "You must ACCEPT the HIT before you can submit the results.";
      }
    }
  }

  window.turkGetParam = turkGetParam;
  window.turkSetAssignmentID = turkSetAssignmentID;
  // Pages that forget to call it still submit to the right place (the default form and button).
  document.addEventListener("DOMContentLoaded", function () {
    turkSetAssignmentID();
  });
})();
