/*
 * crowd-image-classifier ({label, workerComment?}) and
 * crowd-image-classifier-multi-select ({labels: [...], workerComment?}).
 *
 * Attributes: src, categories, header, name, overlay (a previous task's labels
 * drawn over the image, for verification: {boundingBox: {labels, value: [...]}}
 * or {semanticSegmentation | instanceSegmentation: {src, labelMappings}}), and on
 * the multi-select exclusion-category. Regions: short-instructions,
 * full-instructions, worker-comment (header, link-text, placeholder): a link that
 * opens a dialog with a comment box; workerComment is in the answer only when the
 * worker wrote one. Choosing works as in crowd-classifier (crowd-classifier.js):
 * arrows, Space/Enter, digits 1-9.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4"];

  function imageClassifier(Base) {
    return class extends Base {
      extraCss() {
        return ".stage{position:relative;display:inline-block;line-height:0;max-width:100%}.stage img{max-width:100%;display:block}" +
          ".stage svg{position:absolute;inset:0;width:100%;height:100%;pointer-events:none}" +
          ".comment-link{border:0;background:none;color:#0b5cad;text-decoration:underline;padding:0;font:inherit;cursor:pointer}" +
          "textarea{display:block;width:100%;box-sizing:border-box;font:inherit;margin:.5em 0}.said{color:#444;font-style:italic}";
      }
      targetHtml() {
        return "<div class=\"stage\"><img alt=\"" + crowd.escape(this.getAttribute("header") || "Image to classify") +
          "\"><svg aria-hidden=\"true\"></svg></div>";
      }
      commentHtml() {
        return "<div class=\"comment\" hidden><p><button type=\"button\" class=\"comment-link\"></button> " +
          "<span class=\"said\"></span></p><dialog class=\"comment-dialog\"><h2 class=\"comment-header\"></h2>" +
          "<slot name=\"worker-comment\"></slot><label><span class=\"comment-header\"></span>" +
          "<textarea rows=\"4\"></textarea></label><p><button type=\"button\" class=\"comment-done\">Done</button></p></dialog></div>";
      }
      built(root) {
        var img = root.querySelector(".stage img");
        img.addEventListener("load", () => this._drawOverlay());
        img.src = this.getAttribute("src") || "";
        var dialog = root.querySelector(".comment-dialog");
        var box = root.querySelector("textarea");
        root.querySelector(".comment-link").addEventListener("click", () => { dialog.showModal(); box.focus(); });
        var done = () => {
          root.querySelector(".said").textContent = box.value.trim() ? "\u201c" + box.value.trim() + "\u201d" : "";
        };
        root.querySelector(".comment-done").addEventListener("click", () => dialog.close());
        dialog.addEventListener("close", done);
      }
      parsed(root) {
        var region = this.querySelector(":scope > worker-comment");
        if (!region) return;
        var header = region.getAttribute("header") || "Add a comment";
        root.querySelector(".comment").hidden = false;
        root.querySelector(".comment-link").textContent = region.getAttribute("link-text") || "Add a comment";
        root.querySelectorAll(".comment-header").forEach(function (h) { h.textContent = header; });
        root.querySelector(".comment-dialog").setAttribute("aria-label", header);
        root.querySelector("textarea").placeholder = region.getAttribute("placeholder") || "";
      }
      extraAnswer() {
        var box = this.shadowRoot && this.shadowRoot.querySelector("textarea");
        var comment = box && !this.shadowRoot.querySelector(".comment").hidden ? box.value.trim() : "";
        return comment ? { workerComment: comment } : {};
      }
      crowdReset() {
        super.crowdReset();
        this.shadowRoot.querySelector("textarea").value = "";
        this.shadowRoot.querySelector(".said").textContent = "";
      }

      /* The overlay of a verification task, in the image's own pixels. */
      _drawOverlay() {
        var img = this.shadowRoot.querySelector(".stage img");
        var svg = this.shadowRoot.querySelector(".stage svg");
        svg.setAttribute("viewBox", "0 0 " + (img.naturalWidth || 1) + " " + (img.naturalHeight || 1));
        svg.setAttribute("preserveAspectRatio", "none");
        svg.textContent = "";
        var overlay;
        try {
          overlay = this.hasAttribute("overlay") ? crowd.parseLoose(this.getAttribute("overlay")) : null;
        } catch (e) {
          overlay = null;  // a malformed overlay leaves the image plain rather than breaking the task
        }
        if (!overlay || typeof overlay !== "object") return;
        var add = function (tag, attrs) {
          var el = document.createElementNS(crowd.SVG, tag);
          Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
          svg.appendChild(el);
          return el;
        };
        var boxes = overlay.boundingBox;
        if (boxes && Array.isArray(boxes.value)) {
          var labels = Array.isArray(boxes.labels) ? boxes.labels : [];
          boxes.value.forEach(function (b) {
            var colour = COLOURS[Math.max(0, labels.indexOf(b.label)) % COLOURS.length];
            add("rect", { x: +b.left, y: +b.top, width: +b.width, height: +b.height, fill: colour, "fill-opacity": 0.15,
              stroke: colour, "stroke-width": 2, "vector-effect": "non-scaling-stroke" });
            add("text", { x: +b.left + 3, y: +b.top + 14, fill: colour, "font-size": 14 }).textContent = String(b.label);
          });
        }
        ["semanticSegmentation", "instanceSegmentation"].forEach(function (key) {
          var mask = overlay[key];
          if (mask && mask.src) {
            add("image", { href: String(mask.src), x: 0, y: 0, width: "100%", height: "100%", opacity: 0.5,
              preserveAspectRatio: "none" });
          }
        });
      }
    };
  }

  class CrowdImageClassifier extends imageClassifier(crowd.Classifier) {}
  CrowdImageClassifier.multi = false;
  class CrowdImageClassifierMultiSelect extends imageClassifier(crowd.Classifier) {}
  CrowdImageClassifierMultiSelect.multi = true;
  crowd.define("crowd-image-classifier", CrowdImageClassifier);
  crowd.define("crowd-image-classifier-multi-select", CrowdImageClassifierMultiSelect);
})();
