/*
 * Display-only crowd elements (no answer): crowd-instructions, crowd-modal,
 * crowd-alert, crowd-badge, crowd-card, crowd-fab, crowd-icon-button,
 * crowd-tabs/crowd-tab, crowd-toast. Dialogs are native <dialog>s (Escape
 * closes them); tabs follow the ARIA tabs pattern (arrow keys, Home, End).
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var LINK = "button.opener{font:inherit;cursor:pointer;padding:.35em .9em;border-radius:4px;border:1px solid #0b5cad;background:#fff;color:#0b5cad}" +
    "button.opener.link{border:0;background:none;text-decoration:underline;padding:0}" +
    "button.opener.primary{background:#0b5cad;color:#fff}dialog{max-width:46em}dialog h2{font-size:16px}" +
    ".pages{display:flex;gap:.2em;border-bottom:1px solid #ccc;margin-bottom:.6em}.pages button{font:inherit;border:0;background:none;" +
    "padding:.3em .8em;cursor:pointer}.pages button[aria-selected=true]{border-bottom:3px solid #0b5cad;font-weight:600}";

  function whenParsed(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else queueMicrotask(fn);
  }

  function slotRegions(el, names) {
    Array.from(el.children).forEach(function (child) {
      if (names.indexOf(child.localName) !== -1) child.setAttribute("slot", child.localName);
    });
  }

  /* A link or button (link-text, link-type) opening a modal dialog. */
  class Opener extends HTMLElement {
    _build(title, body) {
      var type = this.getAttribute("link-type") || "link";
      crowd.shadow(this, LINK,
        "<button type=\"button\" class=\"opener " + crowd.escape(type) + "\">" +
        crowd.escape(this.getAttribute("link-text") || this.constructor.linkText) + "</button>" +
        "<dialog aria-label=\"" + crowd.escape(title) + "\"><h2>" + crowd.escape(title) + "</h2>" + body +
        "<p><button type=\"button\" class=\"close\">Close</button></p></dialog>");
      var dialog = this.shadowRoot.querySelector("dialog");
      this.shadowRoot.querySelector(".opener").addEventListener("click", () => this.open());
      this.shadowRoot.querySelector(".close").addEventListener("click", () => dialog.close());
    }
    open() { this.shadowRoot.querySelector("dialog").showModal(); }
    close() { this.shadowRoot.querySelector("dialog").close(); }
  }

  /* Three tabbed pages, as AWS documents: Summary, Detailed Instructions, Examples. */
  var PAGES = [["Summary", "<slot name=\"short-summary\"></slot>"],
    ["Detailed Instructions", "<slot name=\"detailed-instructions\"></slot>"],
    ["Examples", "<h3>Good examples</h3><slot name=\"positive-example\"></slot><h3>Bad examples</h3><slot name=\"negative-example\"></slot>"]];

  class CrowdInstructions extends Opener {
    connectedCallback() {
      if (this.shadowRoot) return;
      this._build("Instructions",
        "<div role=\"tablist\" class=\"pages\">" + PAGES.map(function (page, i) {
          return "<button type=\"button\" role=\"tab\" id=\"tab" + i + "\" aria-controls=\"page" + i + "\">" + page[0] + "</button>";
        }).join("") + "</div>" + PAGES.map(function (page, i) {
          return "<div role=\"tabpanel\" id=\"page" + i + "\" aria-labelledby=\"tab" + i + "\">" + page[1] + "</div>";
        }).join(""));
      var tabs = Array.from(this.shadowRoot.querySelectorAll("[role=tab]"));
      tabs.forEach((tab, i) => tab.addEventListener("click", () => this._page(i)));
      this.shadowRoot.querySelector(".pages").addEventListener("keydown", (e) => {
        var at = tabs.indexOf(e.target);
        var to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
        if (at === -1 || to === undefined) return;
        e.preventDefault();
        this._page((to + tabs.length) % tabs.length);
        tabs[(to + tabs.length) % tabs.length].focus();
      });
      this._page(0);
      whenParsed(() => slotRegions(this, ["short-summary", "detailed-instructions", "positive-example", "negative-example"]));
    }
    _page(index) {
      this.shadowRoot.querySelectorAll("[role=tab]").forEach(function (tab, i) {
        tab.setAttribute("aria-selected", String(i === index));
        tab.tabIndex = i === index ? 0 : -1;
      });
      this.shadowRoot.querySelectorAll("[role=tabpanel]").forEach(function (panel, i) { panel.hidden = i !== index; });
    }
  }
  CrowdInstructions.linkText = "Click for instructions";  // AWS's default link text
  crowd.define("crowd-instructions", CrowdInstructions);

  class CrowdModal extends Opener {
    connectedCallback() {
      if (this.shadowRoot) return;
      this._build(this.getAttribute("modal-title") || "", "<slot></slot>");
      if (this.hasAttribute("open")) whenParsed(() => this.open());
    }
  }
  CrowdModal.linkText = "Click to open modal";  // AWS's default link text
  crowd.define("crowd-modal", CrowdModal);

  var ALERT_COLOURS = { success: "#1e7b34", info: "#0b5cad", warning: "#8a6100", error: "#b00020" };
  class CrowdAlert extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      var colour = ALERT_COLOURS[this.getAttribute("type")] || ALERT_COLOURS.info;
      this.setAttribute("role", this.getAttribute("type") === "error" ? "alert" : "status");
      crowd.shadow(this,
        ":host{display:flex;gap:.5em;align-items:flex-start;border-left:4px solid " + colour + ";padding:.5em .8em;margin:.4em 0;background:#f7f7f7}" +
        "slot{flex:1;display:block}button{font:inherit;border:0;background:none;cursor:pointer}",
        "<slot></slot>" + (this.hasAttribute("dismissible") ? "<button type=\"button\" aria-label=\"Dismiss\">×</button>" : ""));
      var dismiss = this.shadowRoot.querySelector("button");
      if (dismiss) dismiss.addEventListener("click", () => { this.hidden = true; this.style.display = "none"; });
    }
  }
  crowd.define("crowd-alert", CrowdAlert);

  /* icon (a glyph name, or the URL of an image) overrides label; for="id" floats it over that element's top right corner. */
  class CrowdBadge extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      var icon = this.getAttribute("icon");
      var content = icon ? crowd.iconHtml(icon) : crowd.escape(this.getAttribute("label") || "");
      crowd.shadow(this,
        ":host{display:inline-block;min-width:1.4em;padding:0 .4em;border-radius:.8em;background:#0b5cad;color:#fff;text-align:center;font-size:12px}" +
        ":host(.attached){position:absolute;top:0;right:0;transform:translate(50%,-50%);z-index:1}img{width:1em;height:1em;vertical-align:middle}",
        content);
      whenParsed(() => this._attach());
    }
    _attach() {
      var target = this.getAttribute("for") ? document.getElementById(this.getAttribute("for")) : null;
      if (!target || target === this) return;
      // The badge answers nothing, so it can move into the element it decorates.
      if (getComputedStyle(target).position === "static") target.style.position = "relative";
      if (this.parentNode !== target) target.appendChild(this);
      this.classList.add("attached");
    }
  }
  crowd.define("crowd-badge", CrowdBadge);

  class CrowdCard extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      var image = this.getAttribute("image");
      var heading = this.getAttribute("heading");
      crowd.shadow(this,
        ":host{display:block;border:1px solid #ddd;border-radius:6px;box-shadow:0 1px 3px #0002;margin:.5em 0;overflow:hidden}" +
        "img{max-width:100%;display:block}h2{font-size:16px;margin:.6em .8em}.body{padding:0 .8em .8em}",
        (image ? "<img alt=\"\" src=\"" + crowd.escape(image) + "\">" : "") +
        (heading ? "<h2>" + crowd.escape(heading) + "</h2>" : "") + "<div class=\"body\"><slot></slot></div>");
    }
  }
  crowd.define("crowd-card", CrowdCard);

  /*
   * crowd-icon-button and crowd-fab: buttons showing an icon (a name or an image URL), the
   * fab its one-character label instead when it has no icon; title is the tooltip and,
   * with no label, the button's name. disabled stops clicks reaching the page's listeners.
   */
  class IconButton extends HTMLElement {
    static get observedAttributes() { return ["disabled"]; }
    connectedCallback() {
      if (!this.shadowRoot) {
        var icon = this.getAttribute("icon");
        var label = this.getAttribute("label");
        var name = label || this.getAttribute("title") || (crowd.iconIsUrl(icon) ? "" : icon) || "";
        var face = icon ? crowd.iconHtml(icon) : this.constructor.showsLabel ? crowd.escape(label || "") : "";
        crowd.shadow(this, this.constructor.css + "img{width:1.2em;height:1.2em;vertical-align:middle}",
          "<button type=\"button\" aria-label=\"" + crowd.escape(name) + "\">" + face + "</button>");
        // AWS's examples listen for clicks on the element itself: a disabled one must not hear any.
        this.addEventListener("click", (event) => {
          if (this.hasAttribute("disabled")) event.stopImmediatePropagation();
        }, true);
      }
      this.attributeChangedCallback();
    }
    attributeChangedCallback() {
      var button = this.shadowRoot && this.shadowRoot.querySelector("button");
      if (button) button.disabled = this.hasAttribute("disabled");
    }
    focus() { this.shadowRoot.querySelector("button").focus(); }
  }
  class CrowdIconButton extends IconButton {}
  CrowdIconButton.css = "button{font:inherit;width:2.2em;height:2.2em;border-radius:50%;border:0;background:#eee;cursor:pointer}button[disabled]{opacity:.5}";
  class CrowdFab extends IconButton {}
  CrowdFab.showsLabel = true;
  CrowdFab.css = "button{font:inherit;min-width:3em;height:3em;border-radius:1.5em;border:0;background:#0b5cad;color:#fff;" +
    "box-shadow:0 2px 5px #0004;cursor:pointer;padding:0 1em}button[disabled]{opacity:.5}";
  crowd.define("crowd-icon-button", CrowdIconButton);

  /* <iron-icon icon="...">, which AWS's script brought with it and pages use inside buttons. */
  class IronIcon extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      var icon = this.getAttribute("icon") || "";
      if (!this.hasAttribute("role")) this.setAttribute("role", "img");
      if (!this.hasAttribute("aria-label")) this.setAttribute("aria-label", icon.replace(/^.*:/, ""));
      crowd.shadow(this, ":host{display:inline-block;min-width:1em;text-align:center}", crowd.escape(crowd.glyph(icon)));
    }
  }
  crowd.define("iron-icon", IronIcon);
  crowd.define("crowd-fab", CrowdFab);

  class CrowdTab extends HTMLElement {
    connectedCallback() {
      this.setAttribute("role", "tabpanel");
      if (!this.hasAttribute("tabindex")) this.setAttribute("tabindex", "0");
    }
  }
  crowd.define("crowd-tab", CrowdTab);

  class CrowdTabs extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      crowd.shadow(this,
        ":host{display:block;margin:.5em 0}[role=tablist]{display:flex;border-bottom:1px solid #ccc}" +
        "[role=tab]{font:inherit;border:0;background:none;padding:.5em 1em;cursor:pointer;border-bottom:3px solid transparent}" +
        "[role=tab][aria-selected=true]{border-bottom-color:#0b5cad;font-weight:600}.panels{padding:.6em 0}",
        "<div role=\"tablist\"></div><div class=\"panels\"><slot></slot></div>");
      whenParsed(() => this._build());
    }
    _tabs() { return Array.from(this.querySelectorAll(":scope > crowd-tab")); }
    _build() {
      var list = this.shadowRoot.querySelector("[role=tablist]");
      list.innerHTML = "";
      this._tabs().forEach((panel, i) => {
        var tab = document.createElement("button");
        tab.type = "button";
        tab.setAttribute("role", "tab");
        tab.textContent = panel.getAttribute("header") || "Tab " + (i + 1);
        tab.addEventListener("click", () => this.select(i));
        list.appendChild(tab);
        panel.setAttribute("aria-label", tab.textContent);
      });
      list.addEventListener("keydown", (e) => {
        var tabs = Array.from(list.children);
        var at = tabs.indexOf(e.composedPath()[0]);
        var next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
        if (next === undefined || at === -1) return;
        e.preventDefault();
        next = (next + tabs.length) % tabs.length;
        this.select(next);
        tabs[next].focus();
      });
      this.select(0);
    }
    select(index) {
      var tabs = Array.from(this.shadowRoot.querySelectorAll("[role=tab]"));
      this._tabs().forEach(function (panel, i) {
        panel.hidden = i !== index;
        tabs[i].setAttribute("aria-selected", String(i === index));
        tabs[i].tabIndex = i === index ? 0 : -1;
      });
    }
  }
  crowd.define("crowd-tabs", CrowdTabs);

  class CrowdToast extends HTMLElement {
    static get observedAttributes() { return ["opened"]; }
    connectedCallback() {
      if (this.shadowRoot) return;
      this.setAttribute("role", "status");
      crowd.shadow(this,
        ":host{position:fixed;left:1em;bottom:1em;background:#333;color:#fff;padding:.6em 1em;border-radius:4px;display:none}" +
        ":host([opened]){display:block}",
        "<span class=\"text\"></span><slot></slot>");
      this.attributeChangedCallback();
    }
    attributeChangedCallback() {
      if (!this.shadowRoot) return;
      this.shadowRoot.querySelector(".text").textContent = this.getAttribute("text") || "";
      if (this.hasAttribute("opened")) {
        // Only one toast shows at a time, as AWS documents: a newly opened one closes the others.
        var me = this;
        document.querySelectorAll("crowd-toast[opened]").forEach(function (other) { if (other !== me) other.close(); });
        clearTimeout(this._timer);
        var ms = Number(this.getAttribute("duration") || 3000);
        if (ms > 0) this._timer = setTimeout(() => this.removeAttribute("opened"), ms);
      }
    }
    show() { this.setAttribute("opened", ""); }
    open() { this.show(); }
    close() { this.removeAttribute("opened"); }
  }
  crowd.define("crowd-toast", CrowdToast);
})();
