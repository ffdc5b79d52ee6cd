package page

// css is the page's inline style sheet: system fonts only (no web font),
// tables that fit the page's width (cells wrap, nothing scrolls sideways
// at 1280 px), charts that scale to the width of the page.
const css = `
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1a1a1a;background:#fff;margin:0 auto;max-width:1400px;padding:0 1.2em 3em}
h1{font-size:1.6em;margin:.8em 0 .2em}h2{font-size:1.3em;border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}h3{font-size:1.08em;margin:1.4em 0 .4em}
code{font:13px/1.4 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;background:#f4f4f4;padding:.1em .3em;word-break:break-all}
dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.6em 0}dl.prov dt{font-weight:600;color:#444}dl.prov dd{margin:0}
.tw{margin:.6em 0 1em;max-width:100%}
table{border-collapse:collapse;font-size:13px}details.fold table{font-size:12px}
details.fold{margin:.4em 0 1em}details.fold>summary{cursor:pointer;font-weight:600;color:#333}
tr.group th{background:#f3f3f3;font-weight:600}td.cause{font-size:12px;color:#7a2a00}
section.answers{border:2px solid #0072B2;border-radius:6px;padding:.2em 1em .6em;margin:1em 0}section.answers h2{margin-top:.4em;border:0}
p.answer-of{margin:.5em 0 .1em;font-weight:600}ul.answer-list{margin:.1em 0 .4em;padding-left:1.3em}
ul.series-notes li{margin:.15em 0}p.answer-note{margin:.1em 0 .4em 1.3em;font-size:13.5px;color:#7a2a00}
dl.nums{display:grid;grid-template-columns:max-content 1fr;gap:0 .6em;margin:0;font-size:12px}dl.nums dt{color:#555}dl.nums dd{margin:0}caption{text-align:left;font-weight:600;padding:.3em 0;color:#333}
th,td{border:1px solid #d4d4d4;padding:.22em .45em;text-align:left;vertical-align:top;overflow-wrap:break-word}thead th{background:#eef1f5}
tbody tr:nth-child(even){background:#fafafa}td.num{text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:normal}
td.failed{color:#a3000b;font-weight:700}td.details{font-size:12px;color:#555;word-break:break-word}
td.verdict{font-weight:700}td.v-better{color:#fff;background:#0072B2}td.v-worse{color:#fff;background:#A63C00}td.v-same{color:#333;background:#e9e9e9}
.charts{display:grid;grid-template-columns:1fr;gap:1em}
p.multiples-title{font-weight:600;margin:.8em 0 .2em}ul.legend-strip{list-style:none;display:flex;flex-wrap:wrap;gap:.2em 1.2em;margin:.2em 0 .4em;padding:0;font-size:13.5px}
ul.legend-strip li{cursor:pointer;white-space:nowrap}ul.legend-strip svg{display:inline-block;width:36px;height:16px;vertical-align:middle;margin-right:.3em}ul.legend-strip li.off{opacity:.35}
.multiples{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,520px),1fr));gap:.6em}
figure.chart{margin:0;border:1px solid #e2e2e2;border-radius:4px;padding:.4em}figure.chart figcaption{font-size:13px;color:#555;padding:0 .4em}
svg{width:100%;height:auto;display:block;font-family:system-ui,sans-serif}
svg .grid{stroke:#e6e6e6;stroke-width:1}svg .frame{fill:none;stroke:#999}svg .tick{font-size:12px;fill:#444}
svg .alabel{font-size:13px;fill:#222}svg .ctitle{font-size:15px;font-weight:600;fill:#111}
svg .line{fill:none;stroke:currentColor;stroke-width:2}svg .ref line,svg .legend-ref line{stroke:#A63C00;stroke-width:2}svg .ref text{font-size:12px;fill:#A63C00}svg .pt{fill:currentColor;stroke:#fff;stroke-width:.8}
svg .pt.open{fill:none;stroke:currentColor;stroke-width:2.2}svg .band{fill:currentColor;fill-opacity:.18;stroke:none}
svg .fail{fill:none;stroke:#000;stroke-width:1.6;stroke-dasharray:3 2}
svg .ci{fill:none;stroke:currentColor;stroke-width:1.6}svg .range{fill:currentColor;fill-opacity:.2;stroke:currentColor;stroke-opacity:.45;stroke-width:.8}
svg .mark line{stroke:#555;stroke-width:1.5}svg .mark text{font-size:12px;fill:#333}
svg .legend text{font-size:13px;fill:#222}svg .legend-item{cursor:pointer}
svg .series.off{display:none}svg .legend-item.off{opacity:.35}
.hl svg .series:not(.hot){opacity:.15}.hl svg .legend-item:not(.hot){opacity:.45}
ul.stops li,td.failed{color:#a3000b}
@media print{nav{display:none}}
`

// script adds legend toggling (click, Enter or Space on a legend entry
// hides or shows that series in every chart of its section) and hover
// highlighting. The page reads the same without it.
const script = `
(function(){
  function each(root,sel,f){Array.prototype.forEach.call(root.querySelectorAll(sel),f);}
  each(document,'.legend-item[data-series]',function(it){
    var sec=it.closest('.factor-charts,section'),k=it.getAttribute('data-series'),sel='[data-series="'+k+'"]';
    it.setAttribute('role','button');it.setAttribute('tabindex','0');it.setAttribute('aria-pressed','true');
    function toggle(){
      var off=!it.classList.contains('off');
      each(sec,sel,function(e){e.classList.toggle('off',off);if(e.classList.contains('legend-item')){e.setAttribute('aria-pressed',off?'false':'true');}});
    }
    function hot(on){sec.classList.toggle('hl',on);each(sec,sel,function(e){e.classList.toggle('hot',on);});}
    it.addEventListener('click',toggle);
    it.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();toggle();}});
    it.addEventListener('mouseenter',function(){hot(true);});
    it.addEventListener('mouseleave',function(){hot(false);});
  });
  each(document,'.series[data-series]',function(g){
    var sec=g.closest('.factor-charts,section'),sel='[data-series="'+g.getAttribute('data-series')+'"]';
    g.addEventListener('mouseenter',function(){sec.classList.add('hl');each(sec,sel,function(e){e.classList.add('hot');});});
    g.addEventListener('mouseleave',function(){sec.classList.remove('hl');each(sec,sel,function(e){e.classList.remove('hot');});});
  });
})();
`
