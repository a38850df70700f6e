// Narrows the claims table to the chosen setting, verdict and paper, and says how many rows are shown.
(function () {
  var table = document.getElementById("claims");
  if (!table) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var selects = document.querySelectorAll("select[data-filter]");
  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var ok = Array.prototype.every.call(selects, function (s) {
        return !s.value || row.dataset[s.dataset.filter] === s.value;
      });
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    document.getElementById("shown").textContent = shown + " of " + rows.length + " headline claims shown";
  }
  Array.prototype.forEach.call(selects, function (s) { s.addEventListener("change", apply); });
  apply();
})();
