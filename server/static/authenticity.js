/*
 * hitforge's typing record for HIT pages: counts, never content.
 *
 * Added by the worker site to the HIT pages it serves (and carried by the campaign
 * pages), without touching the page itself. It watches the page's free-text fields
 * (textareas and text inputs, also those inside crowd elements' open shadow roots)
 * and counts keystrokes, pastes and how many characters they brought, how often the
 * page lost focus or was hidden, and when the first input came. When a form is
 * submitted (a submit button, form.submit(), or a crowd-form's own post) it adds one
 * field, hitforgeAuthenticity, holding those counts as compact JSON. What is typed is
 * never read: only lengths.
 */
(function () {
  "use strict";
  if (window.hitforgeAuthenticity) {
    return; // loaded twice (a page that also names it): one record is enough
  }
  var FIELD = "hitforgeAuthenticity";
  // Input types whose value is free text a person writes.
  var TEXT_TYPES = ["text", "search", "email", "url", "tel", ""];
  // Keys that are not typing on their own.
  var MODIFIERS = ["Shift", "Control", "Alt", "Meta", "CapsLock", "AltGraph", "Fn", "Tab", "Escape"];

  function now() {
    return window.performance && window.performance.now ? window.performance.now() : Date.now();
  }

  var loaded = now();
  var counts = { keys: 0, pastes: 0, pasted: 0, blurs: 0, hides: 0 };
  var firstInput = null;
  var firstKey = null;
  var lastKey = null;
  var touched = [];

  function isTextField(el) {
    if (!el || el.nodeType !== 1) {
      return false;
    }
    if (el.localName === "textarea") {
      return true;
    }
    if (el.localName !== "input") {
      return false;
    }
    return TEXT_TYPES.indexOf((el.getAttribute("type") || "").toLowerCase()) !== -1;
  }

  /* The field an event happened in: its innermost target, inside a shadow root too. */
  function fieldOf(event) {
    var path = typeof event.composedPath === "function" ? event.composedPath() : [];
    var el = path.length ? path[0] : event.target;
    if (!isTextField(el)) {
      return null;
    }
    if (touched.indexOf(el) === -1) {
      touched.push(el);
    }
    return el;
  }

  function entered() {
    if (firstInput === null) {
      firstInput = now();
    }
  }

  document.addEventListener("keydown", function (event) {
    // Shortcuts (Ctrl+V is a paste, counted below), lone modifiers and a held key's repeats are not typing.
    if (event.ctrlKey || event.metaKey || event.repeat || MODIFIERS.indexOf(event.key) !== -1) {
      return;
    }
    if (!fieldOf(event)) {
      return;
    }
    var at = now();
    counts.keys += 1;
    if (firstKey === null) {
      firstKey = at;
    }
    lastKey = at;
  }, true);

  document.addEventListener("input", function (event) {
    if (fieldOf(event)) {
      entered();
    }
  }, true);

  function pastedLength(data) {
    if (!data) {
      return 0;
    }
    try {
      return (data.getData("text/plain") || data.getData("text") || "").length;
    } catch (e) {
      return 0; // the browser would not say: the paste still counts
    }
  }

  document.addEventListener("paste", function (event) {
    if (fieldOf(event)) {
      counts.pastes += 1;
      counts.pasted += pastedLength(event.clipboardData);
      entered();
    }
  }, true);

  document.addEventListener("drop", function (event) {
    // Text dragged in from elsewhere is not typed either.
    if (fieldOf(event)) {
      counts.pastes += 1;
      counts.pasted += pastedLength(event.dataTransfer);
      entered();
    }
  }, true);

  window.addEventListener("blur", function () {
    counts.blurs += 1;
  });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") {
      counts.hides += 1;
    }
  });

  /* Every text field of the page, in open shadow roots too. */
  function allFields(root, found) {
    var nodes = root.querySelectorAll("*");
    for (var i = 0; i < nodes.length; i++) {
      var el = nodes[i];
      if (isTextField(el)) {
        found.push(el);
      }
      if (el.shadowRoot) {
        allFields(el.shadowRoot, found);
      }
    }
    return found;
  }

  /* Characters the worker produced: each field's length beyond what the page put in it. */
  function producedChars() {
    var total = 0;
    allFields(document, []).forEach(function (el) {
      var value = typeof el.value === "string" ? el.value : "";
      var preset = typeof el.defaultValue === "string" ? el.defaultValue : "";
      total += Math.max(0, value.length - preset.length);
    });
    return total;
  }

  function summary() {
    var record = {
      v: 1,
      chars: producedChars(),
      keys: counts.keys,
      pastes: counts.pastes,
      pasted: counts.pasted,
      blurs: counts.blurs,
      hides: counts.hides,
      fields: touched.length,
      typing_ms: firstKey === null ? 0 : Math.round(lastKey - firstKey),
      page_ms: Math.round(now() - loaded)
    };
    if (firstInput !== null) {
      record.first_ms = Math.round(firstInput - loaded);
    }
    return JSON.stringify(record);
  }

  /* One field, whatever way the form is sent: the formdata event fires for a submit
   * button, requestSubmit() and form.submit() alike; set() replaces one the page had. */
  document.addEventListener("formdata", function (event) {
    if (event.formData && typeof event.formData.set === "function") {
      event.formData.set(FIELD, summary());
    }
  }, true);

  if (typeof window.FormDataEvent === "undefined") {
    // Older browsers: a hidden input, before the submit handlers and form.submit() read the form.
    var put = function (form) {
      var input = form.querySelector('input[name="' + FIELD + '"]');
      if (!input) {
        input = document.createElement("input");
        input.type = "hidden";
        input.name = FIELD;
        form.appendChild(input);
      }
      input.value = summary();
    };
    document.addEventListener("submit", function (event) {
      if (event.target && event.target.localName === "form") {
        put(event.target);
      }
    }, true);
    var submit = HTMLFormElement.prototype.submit;
    HTMLFormElement.prototype.submit = function () {
      put(this);
      return submit.apply(this, arguments);
    };
  }

  window.hitforgeAuthenticity = { field: FIELD, summary: summary };
})();
