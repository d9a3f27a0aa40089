// The worker profile's plot: cumulative gold accuracy after each graded assignment, with the
// campaigns' thresholds as flat lines. Drawn with uPlot (served by the dashboard from the local npm
// copy); the table under the plot carries the same figures for screen readers and printing.
(function () {
  "use strict";
  var holder = document.getElementById("gold-plot");
  var source = document.getElementById("gold-plot-data");
  if (!holder || !source || typeof uPlot === "undefined") return;
  var data = JSON.parse(source.textContent);
  if (!data.when.length) return;
  var series = [{}, { label: "Gold accuracy so far (%)", stroke: "#1f5fbf", width: 2, points: { show: true } }];
  var columns = [data.when, data.accuracy];
  data.thresholds.forEach(function (t) {
    series.push({ label: "Threshold " + t + "%", stroke: "#a33b00", dash: [6, 4], width: 1, points: { show: false } });
    columns.push(data.when.map(function () { return t; }));
  });
  var width = Math.min(holder.clientWidth || 720, 900);
  new uPlot(
    {
      width: width,
      height: 260,
      series: series,
      scales: { y: { range: [0, 100] } },
      axes: [{}, { label: "%", values: function (u, ticks) { return ticks.map(function (v) { return v + "%"; }); } }],
    },
    columns,
    holder
  );
  holder.setAttribute("data-drawn", String(data.when.length));
})();
