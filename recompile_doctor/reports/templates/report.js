/* recompile-doctor: optional progressive enhancement. The page is complete without it;
   this only makes the module tables sortable by clicking a column heading. */
(function () {
  "use strict";
  function key(cell, type) {
    if (type === "num") {
      var v = parseFloat(cell.getAttribute("data-v"));
      return isNaN(v) ? -Infinity : v;
    }
    return (cell.textContent || "").toLowerCase();
  }
  function sortBy(table, col, th) {
    var type = th.getAttribute("data-type") || "text";
    var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" :
      (th.getAttribute("aria-sort") === "ascending" ? "descending" :
        (type === "num" ? "descending" : "ascending"));
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", dir);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (r, i) {
      return { row: r, k: key(r.cells[col], type), i: i };
    });
    var sign = dir === "ascending" ? 1 : -1;
    rows.sort(function (a, b) {
      var c = type === "num" ? (a.k < b.k ? -1 : (a.k > b.k ? 1 : 0)) :
        String(a.k).localeCompare(String(b.k), "en", { numeric: true });
      return c ? sign * c : a.i - b.i;
    });
    var frag = document.createDocumentFragment();
    rows.forEach(function (x) { frag.appendChild(x.row); });
    body.appendChild(frag);
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = th.textContent;
      b.title = "Sort by " + th.textContent;
      th.textContent = "";
      th.appendChild(b);
      b.addEventListener("click", function () { sortBy(table, col, th); });
    });
  });
})();
