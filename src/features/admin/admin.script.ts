/**
 * The console's own script, served at /admin/assets/admin.js (the CSP allows no inline script):
 * draws the events chart with uPlot from the page's JSON data block. The same numbers are in a
 * table beside it, so the page reads fully without JavaScript.
 */
export const ADMIN_JS = `
(function () {
  'use strict';
  function draw() {
    var holder = document.getElementById('events-chart');
    var data = document.getElementById('events-chart-data');
    if (!holder || !data || typeof uPlot === 'undefined') return;
    var chart = JSON.parse(data.textContent || '{}');
    if (!chart.days || chart.days.length === 0) return;
    var palette = ['#0b57d0', '#b3261e', '#146c2e', '#8a4b00', '#6f2dbd', '#00677f', '#5c5c5c', '#a3127a'];
    var series = [{ label: 'Day' }].concat(chart.series.map(function (s, i) {
      return { label: s.label, stroke: palette[i % palette.length], width: 2, points: { show: true } };
    }));
    var xs = chart.days.map(function (d) { return Date.parse(d + 'T00:00:00Z') / 1000; });
    var width = Math.max(280, holder.clientWidth || 600);
    // The axis spans the days shown, half a day either side: uPlot's own range for a single day
    // of data runs years ahead.
    var range = [xs[0] - 43200, xs[xs.length - 1] + 43200];
    var plot = new uPlot({ width: width, height: 300, series: series, scales: { x: { time: true, range: range } }, axes: [{}, { label: 'Events' }] },
      [xs].concat(chart.series.map(function (s) { return s.counts; })), holder);
    holder.setAttribute('data-drawn', 'true');
    window.addEventListener('resize', function () { plot.setSize({ width: Math.max(280, holder.clientWidth || 600), height: 300 }); });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', draw); else draw();
})();
`;
