// leadgate's own browser behaviour beyond htmx. It is a file, not inline
// script, so the Content-Security-Policy can keep script-src 'self'.
(function () {
  "use strict";

  // A checkbox with data-select-all="<form id>" checks or clears every
  // name="id" checkbox of that form; it shows "indeterminate" for a partial
  // selection and an element with data-selected-count says how many are
  // picked. It starts hidden so pages without this script show no dead control.
  function boxes(form) {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.type === "checkbox" && el.name === "id" && !el.disabled;
    });
  }

  function sync(all) {
    var form = document.getElementById(all.dataset.selectAll);
    if (!form) return;
    var list = boxes(form);
    var n = list.filter(function (b) { return b.checked; }).length;
    all.checked = n > 0 && n === list.length;
    all.indeterminate = n > 0 && n < list.length;
    var count = form.querySelector("[data-selected-count]");
    if (count) count.textContent = n === 0 ? "" : n + " selected";
  }

  function init(root) {
    root.querySelectorAll("input[data-select-all]").forEach(function (all) {
      all.hidden = false;
      sync(all);
    });
  }

  document.addEventListener("change", function (ev) {
    var t = ev.target;
    if (!(t instanceof HTMLInputElement) || t.type !== "checkbox") return;
    if (t.dataset.selectAll) {
      var form = document.getElementById(t.dataset.selectAll);
      if (!form) return;
      boxes(form).forEach(function (b) { b.checked = t.checked; });
      sync(t);
      return;
    }
    if (t.form && t.form.id) {
      document.querySelectorAll('input[data-select-all="' + t.form.id + '"]').forEach(sync);
    }
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { init(document); });
  } else {
    init(document);
  }
  // Fragments swapped in by htmx may bring their own select-all boxes.
  document.addEventListener("htmx:afterSettle", function (ev) { init(ev.target); });
})();
