/* Shared pieces of hitforge's crowd elements: shadow roots, attributes, category lists. */
(function () {
  "use strict";
  var crowd = (window.hitforgeCrowd = window.hitforgeCrowd || {});

  crowd.FONT = "font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; font-size: 14px;";

  /** Attach (once) an open shadow root holding ``css`` and ``html``. */
  crowd.shadow = function (el, css, html) {
    var root = el.shadowRoot || el.attachShadow({ mode: "open" });
    root.innerHTML = "<style>:host{" + crowd.FONT + "}" + css + "</style>" + html;
    return root;
  };

  crowd.escape = function (text) {
    var div = document.createElement("div");
    div.textContent = text == null ? "" : String(text);
    return div.innerHTML.replace(/"/g, "&quot;");
  };

  /**
   * A ``categories`` attribute: JSON, or the JSON-like list with single quotes
   * that AWS's examples use (['Positive', 'Negative']).
   */
  crowd.parseList = function (text) {
    if (!text) return [];
    try {
      return JSON.parse(text);
    } catch (e) {
      var items = [];
      var re = /'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/g;
      var m;
      while ((m = re.exec(text)) !== null) {
        items.push((m[1] !== undefined ? m[1] : m[2]).replace(/\\(.)/g, "$1"));
      }
      return items;
    }
  };

  /** Reflect a boolean attribute as a property. */
  crowd.boolProp = function (cls, name, attr) {
    Object.defineProperty(cls.prototype, name, {
      configurable: true,
      get: function () { return this.hasAttribute(attr || name); },
      set: function (on) { this.toggleAttribute(attr || name, !!on); },
    });
  };

  /*
   * A page's script may set a property (value, checked...) on an element before the crowd
   * script defines it (the script loaded late, at the end of the body): the value then sits
   * on the element itself and hides the class's setter. Hand it to the setter, as AWS's
   * (Polymer) elements took such values over.
   */
  function takeEarlyProperties(el, proto) {
    Object.keys(el).forEach(function (key) {
      for (var p = proto; p && p !== HTMLElement.prototype; p = Object.getPrototypeOf(p)) {
        var described = Object.getOwnPropertyDescriptor(p, key);
        if (!described) continue;
        if (described.set) {
          var value = el[key];
          delete el[key];
          el[key] = value;
        }
        return;
      }
    });
  }

  crowd.define = function (name, cls) {
    if (customElements.get(name)) return;
    var connected = cls.prototype.connectedCallback;
    cls.prototype.connectedCallback = function () {
      if (!this._earlyTaken) {
        this._earlyTaken = true;
        takeEarlyProperties(this, cls.prototype);
      }
      if (connected) connected.call(this);
    };
    customElements.define(name, cls);
  };

  // A few glyphs for the icon names AWS's examples use; any other name shows its first letter.
  var GLYPHS = { add: "+", close: "×", clear: "×", check: "✓", delete: "🗑", edit: "✎", info: "ℹ",
    help: "?", search: "🔍", star: "★", "arrow-back": "←", "arrow-forward": "→", menu: "☰",
    warning: "⚠", error: "⚠", done: "✓", remove: "−", "thumb-up": "👍", "thumb-down": "👎" };
  crowd.glyph = function (icon) {
    if (!icon) return "";
    var key = icon.replace(/^.*:/, "");
    return GLYPHS[key] || key.charAt(0).toUpperCase();
  };

  /* An icon attribute is an iron-icons name or, as AWS documents, the URL of a custom image. */
  crowd.iconIsUrl = function (icon) { return !!icon && /[/.]/.test(icon); };

  /** The markup of an ``icon`` attribute: the image at its URL, or the name's glyph. */
  crowd.iconHtml = function (icon) {
    return crowd.iconIsUrl(icon) ? "<img alt=\"\" src=\"" + crowd.escape(icon) + "\">" : crowd.escape(crowd.glyph(icon));
  };
})();
