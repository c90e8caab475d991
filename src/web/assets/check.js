// Check page: the edit form shows only the fields of the chosen kind, and the schedule
// preview follows what is typed (the server validates with the API's rules and answers
// with an HTML fragment). Without this script both field groups show and the preview is
// the one rendered with the page.
"use strict";
(function () {
  function setup() {
    var form = document.querySelector("form.edit-check");
    if (!form) { return; }
    var simple = form.querySelector(".when-simple");
    var schedule = form.querySelector(".when-schedule");
    function showKind() {
      var picked = form.querySelector("input[name=kind]:checked");
      var isSimple = !picked || picked.value === "simple";
      if (simple) { simple.hidden = !isSimple; }
      if (schedule) { schedule.hidden = isSimple; }
    }
    form.querySelectorAll("input[name=kind]").forEach(function (r) {
      r.addEventListener("change", showKind);
    });
    showKind();

    var expr = form.querySelector("#f-schedule");
    var tz = form.querySelector("#f-tz");
    var out = form.querySelector("#schedule-preview");
    if (!expr || !tz || !out) { return; }
    var timer = null;
    var asked = 0;
    function refresh() {
      var n = ++asked;
      var url = expr.getAttribute("data-preview") +
        "?schedule=" + encodeURIComponent(expr.value) + "&tz=" + encodeURIComponent(tz.value);
      fetch(url, { credentials: "same-origin" }).then(function (r) {
        return r.ok ? r.text() : null;
      }).then(function (html) {
        if (html === null || n !== asked) { return; }
        out.innerHTML = html;
        if (window.overdueLocalTimes) { window.overdueLocalTimes(out); }
      }).catch(function () {});
    }
    function later() {
      clearTimeout(timer);
      timer = setTimeout(refresh, 300);
    }
    expr.addEventListener("input", later);
    tz.addEventListener("input", later);
    tz.addEventListener("change", later);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
