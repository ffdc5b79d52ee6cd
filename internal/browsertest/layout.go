package browsertest

// Layout is what the page tests read of a sweep's or a study's page
// (ReadLayout).
type Layout struct {
	ViewportH    float64 `json:"viewportH"`
	AnswersTop   float64 `json:"answersTop"`
	FirstChart   float64 `json:"firstChart"`
	FirstAnswer  float64 `json:"firstAnswerBottom"`
	ScrollWidth  float64 `json:"scrollWidth"`
	ClientWidth  float64 `json:"clientWidth"`
	Wide         []string
	WideOpen     []string `json:"wideOpen"`
	ScrollOpen   float64  `json:"scrollOpen"`
	Answers      map[string][]string
	Rings        []string
	Unexplained  []string
	Legend       map[string]string
	CauseCells   map[string]map[string]string `json:"causeCells"`
	Provenance   map[string][]string
	ListenTitles map[string][]string `json:"listenTitles"`
	Multiples    []float64           `json:"multiples"`
}

// ReadLayout measures the page: where the answers block lies against the
// first viewport and the first chart, the answers per section, elements
// wider than the viewport (with every <details> closed, then open), every
// ringed point's tooltip, each legend entry's colour, the cause cell of
// every level row and each section's provenance terms.
const ReadLayout = `(() => {
  const vw = document.documentElement.clientWidth;
  const wide = () => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > vw + 0.5)
    .slice(0, 5).map(e => e.tagName + '.' + e.getAttribute('class') + ' ' + (e.textContent || '').slice(0, 40) + ' ' + Math.round(e.getBoundingClientRect().right));
  const out = {viewportH: window.innerHeight, clientWidth: vw, scrollWidth: document.documentElement.scrollWidth};
  const ans = document.querySelector('section.answers');
  out.answersTop = ans ? ans.getBoundingClientRect().top : -1;
  const li = ans ? ans.querySelector('li') : null;
  out.firstAnswerBottom = li ? li.getBoundingClientRect().bottom : -1;
  const fc = document.querySelector('figure.chart');
  out.firstChart = fc ? fc.getBoundingClientRect().top : -1;
  out.Answers = {};
  if (ans) ans.querySelectorAll('p.answer-of').forEach(p => {
    const id = p.querySelector('a').getAttribute('href').slice(1);
    out.Answers[id] = [...p.nextElementSibling.querySelectorAll('li')].map(l => l.textContent);
  });
  out.Wide = wide();
  out.Rings = []; out.Unexplained = [];
  document.querySelectorAll('.series circle.fail').forEach(c => {
    const t = c.nextElementSibling && c.nextElementSibling.querySelector('title');
    const s = t ? t.textContent : '';
    out.Rings.push(s);
    if (!/ failed of |; cause: |errors/.test(s)) out.Unexplained.push(s);
  });
  out.Legend = {};
  document.querySelectorAll('section.sweep .legend-item').forEach(g => {
    out.Legend[g.closest('section').id + ' ' + g.querySelector('title').textContent] = getComputedStyle(g).color;
  });
  out.causeCells = {};
  document.querySelectorAll('section.sweep').forEach(sec => {
    const m = {};
    const t = [...sec.querySelectorAll('table')].find(t => t.querySelector('caption').textContent.startsWith('Every level:'));
    if (t) t.querySelectorAll('tbody tr').forEach(tr => { m[tr.cells[0].textContent + ' ' + tr.cells[1].textContent] = tr.cells[tr.cells.length - 1].textContent; });
    out.causeCells[sec.id] = m;
  });
  out.listenTitles = {};
  document.querySelectorAll('section.sweep').forEach(sec => {
    out.listenTitles[sec.id] = [...sec.querySelectorAll('.series .pt > title')].map(t => t.textContent).filter(s => /listen queue[^;]*overflowed/.test(s));
  });
  out.Provenance = {};
  document.querySelectorAll('section.result').forEach(sec => {
    out.Provenance[sec.id] = [...sec.querySelectorAll('dl.prov dt')].map(d => d.textContent);
  });
  out.multiples = [...document.querySelectorAll('#r5 .multiples figure.chart.small')].map(f => f.getBoundingClientRect().width);
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  out.wideOpen = wide();
  out.scrollOpen = document.documentElement.scrollWidth;
  document.querySelectorAll('details').forEach(d => { d.open = false; });
  return out;
})()`
