// Checks page: live rows (a short poll of the rows fragment while the tab is visible, with
// the page's own filters, so scroll position, focus outside the table and filters stay),
// filtering as you type, sorting on change, and the new-check form's kind switch.
(function () {
  var table = document.getElementById("checks");
  if (!table) { return; }
  var form = document.getElementById("check-filters");
  var input = document.getElementById("q");
  var sort = document.getElementById("sort");
  var every = 5000;
  var timer = null;
  var busy = false;

  function query() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (v, k) { if (v !== "") { params.append(k, v); } });
    var s = params.toString();
    return s ? "?" + s : "";
  }

  function setDown(n) {
    var title = document.title.replace(/^\(\d+ down\) /, "");
    document.title = (n > 0 ? "(" + n + " down) " : "") + title;
    var icon = document.getElementById("favicon");
    if (icon) {
      var href = icon.getAttribute("href").replace(/icon-\d+\.svg/, "icon-" + n + ".svg");
      if (href !== icon.getAttribute("href")) { icon.setAttribute("href", href); }
    }
  }

  function refresh() {
    // Replacing the rows under a focused link would throw the keyboard user's place away.
    var focused = document.activeElement;
    if (busy || (focused && focused.closest && focused.closest("#rows"))) { return; }
    busy = true;
    var q = query();
    fetch(table.getAttribute("data-rows") + q, { credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) { throw new Error(r.status); }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var rows = doc.getElementById("rows");
        var counts = doc.getElementById("counts");
        var oldRows = document.getElementById("rows");
        var oldCounts = document.getElementById("counts");
        if (rows && oldRows) { oldRows.innerHTML = rows.innerHTML; }
        if (counts && oldCounts) { oldCounts.replaceWith(document.adoptNode(counts)); }
        if (counts) { setDown(parseInt(counts.getAttribute("data-down"), 10) || 0); }
        if (window.overdueLocalTimes) { window.overdueLocalTimes(document.getElementById("rows")); }
        matchTyped();
        if (q !== location.search) { history.replaceState(null, "", location.pathname + q); }
      })
      .catch(function () { stop(); })
      .then(function () { busy = false; });
  }

  function start() { if (!timer) { timer = setInterval(refresh, every); } }
  function stop() { if (timer) { clearInterval(timer); timer = null; } }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { refresh(); start(); } else { stop(); }
  });
  if (document.visibilityState === "visible") { start(); }

  // Filtering as you type: rows that do not match hide at once; the server's answer follows.
  function matchTyped() {
    var text = input.value.trim().toLowerCase();
    document.querySelectorAll("#rows tr:not(.empty)").forEach(function (tr) {
      var name = tr.querySelector(".name");
      var tags = tr.querySelector(".tags");
      var hay = ((name ? name.textContent : "") + " " + (tags ? tags.textContent : "")).toLowerCase();
      tr.hidden = text !== "" && hay.indexOf(text) < 0;
    });
  }
  var typing = null;
  input.addEventListener("input", function () {
    matchTyped();
    clearTimeout(typing);
    typing = setTimeout(refresh, 300);
  });
  sort.addEventListener("change", function () { form.submit(); });

  // The new-check form shows the fields of the kind chosen.
  var add = document.getElementById("new-check");
  if (add) {
    var kinds = function () {
      var chosen = add.querySelector("input[name=kind]:checked");
      var kind = chosen ? chosen.value : "simple";
      add.querySelectorAll("[data-kind]").forEach(function (el) {
        el.hidden = el.getAttribute("data-kind") !== kind;
      });
    };
    add.addEventListener("change", function (e) { if (e.target.name === "kind") { kinds(); } });
    kinds();
  }
})();
