// Overdue dashboard: progressive enhancement only; every page works without this script.
// No inline handlers (the CSP forbids them): behaviour hangs on data- attributes.
"use strict";
(function () {
  // Forms that destroy something ask first.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { e.preventDefault(); }
  });

  // Copy buttons: <button data-copy="#id"> copies the text of the element it names.
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("[data-copy]");
    if (!button) { return; }
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) { return; }
    var text = source.value !== undefined && source.tagName === "INPUT" ? source.value : source.textContent;
    navigator.clipboard.writeText(text.trim()).then(function () {
      var was = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = was; }, 1500);
    });
  });

  // Times: <time datetime="..."> gets the exact time in the browser's zone on hover.
  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d)) { t.title = d.toLocaleString(); }
    });
  }
  window.overdueLocalTimes = localTimes;
  document.addEventListener("DOMContentLoaded", function () { localTimes(document); });
})();
