// The agent's web page: the graph of values laid out along dependencies (dagre), drawn with d3,
// following the agent's status events live; the transaction history beside it.
'use strict';

const STATES = ['CONFIGURED', 'OBTAINED', 'DISCOVERED', 'PENDING', 'RETRYING', 'FAILED', 'INVALID',
  'UNIMPLEMENTED', 'REMOVED', 'MISSING', 'NONEXISTENT'];
/** States in which a value is not applied: shown first when a group is summarised. */
const TROUBLE = ['FAILED', 'INVALID', 'RETRYING', 'PENDING', 'UNIMPLEMENTED', 'MISSING'];
/** Most values drawn one by one; beyond, values are folded into groups. */
const DRAW_LIMIT = 250;
const AVAILABLE = new Set(['CONFIGURED', 'OBTAINED', 'DISCOVERED']);
/** An operation's recorded flags: its field in the transaction history, and the label shown. */
const OP_FLAGS = [['IsDerived', 'DERIVED'], ['IsProperty', 'PROPERTY'], ['NOOP', 'NOOP'],
  ['IsRevert', 'REVERT'], ['IsRetry', 'RETRY'], ['IsRecreate', 'RECREATE'], ['IsRanAhead', 'RAN-AHEAD']];

const ui = {
  graph: null,          // {nodes: Map(key -> node), edges: [...]}
  asOfTxn: null,        // seq num of the transaction shown, or null = live
  selected: null,       // key or group id
  expanded: new Set(),  // expanded group ids
  changed: new Set(),   // keys of the last transaction's executed operations (live)
  graphAt: null,        // when the graph shown was read from the agent (Date)
  token: sessionStorage.getItem('kvs-token'),
  txns: new Map(),      // seq -> recorded transaction
  renders: 0,
  lastRenderMs: 0,
};
window.kvsUi = ui;

// ---------------------------------------------------------------- talking to the agent

/** What the page says when the agent does not answer at all (instead of the browser's words). */
const NO_ANSWER = 'The agent does not answer: it stopped, is restarting or cannot be reached.'
  + ' The page keeps what it last read and reconnects by itself.';

async function api(path, asText) {
  const headers = ui.token ? {Authorization: 'Bearer ' + ui.token} : {};
  let r;
  try {
    r = await fetch(path, {headers});
  } catch (e) {
    // a network error ("Failed to fetch"): no answer at all
    throw new Error(NO_ANSWER);
  }
  if (r.status === 401) {
    await askToken();
    return api(path, asText);
  }
  if (!r.ok) {
    let msg = r.status + ' ' + r.statusText;
    try { msg = (await r.json()).Error || msg; } catch (e) { /* not JSON */ }
    throw new Error(path + ': ' + msg);
  }
  return asText ? r.text() : r.json();
}

function askToken() {
  return new Promise(resolve => {
    const d = document.getElementById('token-dialog');
    d.addEventListener('close', () => {
      ui.token = document.getElementById('token').value.trim() || null;
      if (ui.token) sessionStorage.setItem('kvs-token', ui.token);
      resolve();
    }, {once: true});
    d.showModal();
  });
}

/** Reads the agent's server-sent events (through fetch, so that the token can be sent). */
async function follow() {
  const live = document.getElementById('live');
  for (;;) {
    try {
      const headers = {Accept: 'text/event-stream'};
      if (ui.token) headers.Authorization = 'Bearer ' + ui.token;
      const r = await fetch('/ui/events', {headers});
      if (r.status === 401) { await askToken(); continue; }
      if (!r.ok || !r.body) throw new Error('events: ' + r.status);
      live.textContent = 'live'; live.className = 'live on';
      if (ui.stale) {
        // back after a disconnection: what changed meanwhile was not followed
        ui.stale = false;
        showStale();
        ui.changed = new Set();
        loadHistory().catch(e => console.warn(e));
        if (ui.asOfTxn === null) loadGraph().catch(e => console.warn(e));
      }
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i); buf = buf.slice(i + 2);
          const data = block.split('\n').filter(l => l.startsWith('data:'))
            .map(l => l.slice(5).trim()).join('\n');
          if (data) onEvent(JSON.parse(data));
        }
      }
    } catch (e) {
      console.warn(e);
    }
    ui.stale = true;
    showStale();
    live.textContent = 'disconnected, reconnecting…'; live.className = 'live off';
    await new Promise(r => setTimeout(r, 2000));
  }
}

/** HH:MM:SS of a time, 24 hours. */
function clock(d) {
  return d ? d.toTimeString().slice(0, 8) : '—';
}

/**
 * Marks the graph stale while the page is not connected to the agent (greyed, with the time it
 * was read), or live again.
 */
function showStale() {
  document.getElementById('graph-pane').classList.toggle('stale', !!ui.stale);
  const note = document.getElementById('stale');
  note.hidden = !ui.stale;
  note.textContent = ui.stale
    ? 'Not connected to the agent: the graph is as of ' + clock(ui.graphAt)
      + ' and may be out of date. Reconnecting…'
    : '';
}

/** The keys of the executed operations of the last recorded transaction. */
function lastTxnKeys() {
  let last = null;
  for (const t of ui.txns.values()) if (last === null || t.SeqNum > last.SeqNum) last = t;
  return new Set(((last && last.Executed) || []).map(o => o.Key));
}

let refreshTimer = null;
function onEvent(ev) {
  if (!ev.changes) return;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    await loadHistory();
    loadProblems();
    loadPending();
    // outlined: what the last transaction did, not every value a status event names (a base
    // value comes with all its derived values)
    ui.changed = lastTxnKeys();
    if (ui.asOfTxn === null) await loadGraph();
    if (ui.selected && ui.graph && ui.graph.nodes.has(ui.selected)) showDetails(ui.selected);
  }, 150);
}

// ---------------------------------------------------------------- the graph's data

/**
 * The agent's graph JSON ({"nodes": [...], "edges": [...]}), with a map of nodes and the derived
 * values of every base. A placeholder node is a key a dependency names that has no value.
 */
function normalise(raw) {
  const nodes = new Map();
  for (const n of raw.nodes || []) {
    const key = n.key;
    nodes.set(key, {
      key,
      // a key a dependency names that holds no value: MISSING (as in the legend and the filter)
      state: n.placeholder === true ? 'MISSING' : n.state || 'NONEXISTENT',
      descriptor: n.descriptor || '',
      base: n.derivedFrom || null,
      error: n.error || '',
      details: null,
      label: n.label || null,
      value: n.value || null,
      derived: [],
      missing: n.placeholder === true,
    });
  }
  for (const n of nodes.values()) {
    if (n.base && nodes.has(n.base)) nodes.get(n.base).derived.push(n.key);
  }
  const edges = [];
  for (const e of raw.edges || []) {
    edges.push({from: e.from, to: e.to, label: e.label || '', relation: e.relation,
      satisfied: e.satisfied});
  }
  // a dependency on a key no value has: drawn as a missing value, so that the wait is visible
  for (const e of edges) {
    if (e.relation === 'depends-on' && e.to && !nodes.has(e.to)) {
      nodes.set(e.to, {key: e.to, state: 'MISSING', descriptor: '', base: null, error: '',
        details: null, label: null, value: null, derived: [], missing: true});
    }
  }
  return {nodes, edges};
}

/** Why a PENDING value waits: the agent's details, or the labels of its unmet dependencies. */
function pendingReason(g, n) {
  if (n.details && n.details.length) return n.details;
  const out = [];
  for (const e of g.edges) {
    if (e.from !== n.key || e.relation !== 'depends-on') continue;
    const t = e.to && g.nodes.get(e.to);
    if (e.satisfied === false || !t || !AVAILABLE.has(t.state)) out.push(e.label || e.to);
  }
  return out;
}

async function loadGraph() {
  const path = '/scheduler/graph?format=json' + (ui.asOfTxn !== null ? '&txn=' + ui.asOfTxn : '');
  ui.graph = normalise(await api(path));
  ui.graphAt = new Date();
  fillFilters();
  render();
}

// ---------------------------------------------------------------- what is drawn

function filters() {
  return {
    text: document.getElementById('f-text').value.trim().toLowerCase(),
    descriptor: document.getElementById('f-descriptor').value,
    state: document.getElementById('f-state').value,
    fold: document.getElementById('f-fold').value,
    neighbourhood: document.getElementById('f-neighbourhood').checked,
  };
}

function fillFilters() {
  const sel = document.getElementById('f-descriptor');
  const have = new Set([...sel.options].map(o => o.value));
  const ds = [...new Set([...ui.graph.nodes.values()].map(n => n.descriptor).filter(d => d))].sort();
  for (const d of ds) {
    if (!have.has(d)) sel.add(new Option(d, d));
  }
  const st = document.getElementById('f-state');
  if (st.options.length === 1) STATES.forEach(s => st.add(new Option(s, s)));
}

/** The keys passing the filters (a derived value passes with its base). */
function visibleKeys(g, f) {
  const pass = n => (!f.text || n.key.toLowerCase().includes(f.text))
    && (!f.descriptor || n.descriptor === f.descriptor)
    && (!f.state || n.state === f.state);
  let keys = new Set();
  for (const n of g.nodes.values()) {
    if (pass(n) || (n.base && g.nodes.has(n.base) && pass(g.nodes.get(n.base)))) keys.add(n.key);
  }
  if (f.neighbourhood && ui.selected && g.nodes.has(ui.selected)) keys = neighbourhood(g, ui.selected);
  return keys;
}

/**
 * A value, its base and derived values, what it depends on and what depends on it (with the base
 * of each derived value among them).
 */
function neighbourhood(g, key) {
  const out = new Set([key]);
  const n = g.nodes.get(key);
  if (n.base) out.add(n.base);
  const core = new Set(out);
  for (const k of core) (g.nodes.get(k)?.derived || []).forEach(d => { out.add(d); core.add(d); });
  for (const e of g.edges) {
    if (core.has(e.from) && e.to) out.add(e.to);
    if (e.to && core.has(e.to)) out.add(e.from);
  }
  for (const k of [...out]) (g.nodes.get(k)?.derived || []).forEach(d => out.add(d));
  // a derived value is drawn with its base: the base of a neighbour comes along
  for (const k of [...out]) {
    const base = g.nodes.get(k)?.base;
    if (base) out.add(base);
  }
  return new Set([...out].filter(k => g.nodes.has(k)));
}

/** The group a value is folded into: its descriptor, or its key without the last segment. */
function groupOf(n, by) {
  if (by === 'prefix') {
    const k = n.key;
    const i = k.lastIndexOf('/');
    return 'prefix:' + (i > 0 ? k.slice(0, i + 1) : k);
  }
  return 'descriptor:' + (n.descriptor || (n.missing ? '(missing values)' : '(no descriptor)'));
}

/** The key a value is folded by: its base's key for a derived value (kept with its base). */
function foldKey(g, k) {
  const n = g.nodes.get(k);
  return n.base && g.nodes.has(n.base) ? n.base : k;
}

function commonPrefix(strings) {
  let p = strings[0] || '';
  for (const s of strings) {
    let i = 0;
    while (i < p.length && i < s.length && p[i] === s[i]) i++;
    p = p.slice(0, i);
    if (!p) break;
  }
  return p;
}

/**
 * The units drawn: single values, or groups of values (folded). A group opens when the user
 * chooses it; one too large to draw splits into groups by the next character of the keys (a
 * split into one group goes on at once), so at no level are thousands of values laid out.
 */
function units(g, keys, f) {
  const fold = f.fold === 'none' ? false
    : f.fold === 'auto' ? keys.size > DRAW_LIMIT : true;
  const unitOf = new Map();
  if (!fold) {
    keys.forEach(k => unitOf.set(k, k));
    return unitOf;
  }
  const by = f.fold === 'prefix' ? 'prefix' : 'descriptor';
  let level = new Map();
  for (const k of keys) {
    const gid = groupOf(g.nodes.get(foldKey(g, k)), by);
    if (!level.has(gid)) level.set(gid, []);
    level.get(gid).push(k);
  }
  while (level.size) {
    const next = new Map();
    for (const [gid, ks] of level) {
      if (!ui.expanded.has(gid)) { ks.forEach(k => unitOf.set(k, gid)); continue; }
      if (ks.length <= DRAW_LIMIT) { ks.forEach(k => unitOf.set(k, k)); continue; }
      const bases = [...new Set(ks.map(k => foldKey(g, k)))];
      if (bases.length === 1) { ks.forEach(k => unitOf.set(k, k)); continue; }
      const cp = commonPrefix(bases);
      const split = new Map();
      for (const k of ks) {
        const sub = 'prefix:' + foldKey(g, k).slice(0, cp.length + 1);
        if (!split.has(sub)) split.set(sub, []);
        split.get(sub).push(k);
      }
      if (split.size === 1) ui.expanded.add([...split.keys()][0]);
      split.forEach((v, sub) => next.set(sub, v));
    }
    level = next;
  }
  return unitOf;
}

// ---------------------------------------------------------------- drawing

/**
 * The label of a group of keys folded by prefix: what tells its keys apart, not what they share.
 * The segment before the part that differs, then the first and last of them:
 * "interfaces/if1 … if1999" for config/mock/v1/interfaces/if1, if10, …, if1999.
 */
function prefixTitle(g, keys) {
  const bases = [...new Set(keys.map(k => foldKey(g, k)))].sort();
  const cp = commonPrefix(bases);
  const cut = cp.lastIndexOf('/', bases.length > 1 ? cp.length : cp.length - 2);
  const parent = cut > 0 ? cp.slice(cp.lastIndexOf('/', cut - 1) + 1, cut + 1) : '';
  const first = bases[0].slice(cut + 1);
  const last = bases[bases.length - 1].slice(cut + 1);
  return parent + first + (bases.length > 1 ? ' … ' + last : '');
}

function shortName(key) {
  const parts = key.split('/');
  return parts.length <= 2 ? key : parts.slice(-2).join('/');
}

function render() {
  const t0 = performance.now();
  const g = ui.graph;
  const f = filters();
  const keys = visibleKeys(g, f);
  const unitOf = units(g, keys, f);

  const layout = new dagre.graphlib.Graph({compound: true, multigraph: true});
  layout.setGraph({rankdir: 'BT', nodesep: 24, ranksep: 60, edgesep: 10, marginx: 20, marginy: 20});
  layout.setDefaultEdgeLabel(() => ({}));

  const groups = new Map();
  for (const [k, u] of unitOf) {
    if (u === k) continue;
    if (!groups.has(u)) groups.set(u, {id: u, keys: [], counts: {}});
    const grp = groups.get(u);
    grp.keys.push(k);
    const s = g.nodes.get(k).state;
    grp.counts[s] = (grp.counts[s] || 0) + 1;
  }
  const drawn = [];
  for (const [k, u] of unitOf) {
    if (u !== k) continue;
    const n = g.nodes.get(k);
    const reason = n.state === 'PENDING' ? pendingReason(g, n) : [];
    const lines = [shortName(k), (n.missing ? 'MISSING (no such value)' : n.state)
      + (reason.length ? ' — waits for ' + reason.join(', ') : '')];
    if (n.error && n.state !== 'PENDING') lines.push(n.error.length > 48 ? n.error.slice(0, 47) + '…' : n.error);
    const width = Math.min(360, 16 + 7 * Math.max(...lines.map(l => l.length)));
    const item = {id: k, node: n, lines, width, height: 14 + 16 * lines.length, reason};
    drawn.push(item);
    layout.setNode(k, item);
  }
  for (const grp of groups.values()) {
    const worst = TROUBLE.find(s => grp.counts[s]) || Object.keys(grp.counts)[0];
    const summary = Object.entries(grp.counts).sort((a, b) => b[1] - a[1])
      .map(([s, c]) => s + ' ' + c).join(', ');
    const title = grp.id.startsWith('prefix:') ? prefixTitle(g, grp.keys) : grp.id.replace(/^descriptor:/, '');
    grp.lines = [title, grp.keys.length + (grp.keys.length === 1 ? ' value' : ' values') + ' (folded)', summary];
    grp.state = worst;
    grp.width = Math.min(420, 16 + 7 * Math.max(...grp.lines.map(l => l.length)));
    grp.height = 14 + 16 * grp.lines.length;
    grp.group = true;
    layout.setNode(grp.id, grp);
  }
  // derived values drawn inside a box with their base
  for (const item of drawn) {
    const n = item.node;
    if (n.base && unitOf.get(n.base) === n.base) {
      const cid = 'cluster:' + n.base;
      if (!layout.hasNode(cid)) { layout.setNode(cid, {cluster: true}); layout.setParent(n.base, cid); }
      layout.setParent(n.key, cid);
    }
  }
  // edges between drawn units; edges inside one group left out, parallel ones counted
  const agg = new Map();
  for (const e of g.edges) {
    if (e.relation === 'derives') continue;  // shown by the box around base and derived
    const a = unitOf.get(e.from);
    const b = e.to ? unitOf.get(e.to) : undefined;
    if (!a || !b || a === b) continue;
    const id = a + '\u0000' + b + '\u0000' + (groups.has(a) || groups.has(b) ? '' : e.label);
    if (!agg.has(id)) agg.set(id, {from: a, to: b, label: e.label, count: 0, unsatisfied: false});
    const x = agg.get(id);
    x.count++;
    const t = g.nodes.get(e.to);
    if (e.satisfied === false || !t || !AVAILABLE.has(t.state)) x.unsatisfied = true;
  }
  for (const [id, e] of agg) {
    e.text = e.count > 1 ? e.count + ' dependencies' : e.label;
    e.width = Math.min(200, 7 * e.text.length); e.height = 14; e.labelpos = 'c';
    layout.setEdge(e.from, e.to, e, id);
  }
  dagre.layout(layout);
  draw(layout, groups);
  ui.lastRenderMs = Math.round(performance.now() - t0);
  ui.renders++;
  document.getElementById('summary').textContent = g.nodes.size + ' values, ' + keys.size
    + ' shown' + (groups.size ? ' (' + groups.size + ' folded groups; open one with a click)' : '')
    + ' — drawn in ' + ui.lastRenderMs + ' ms';
  document.body.dataset.renders = String(ui.renders);
}

function draw(layout, groups) {
  const svg = d3.select('#graph');
  let root = svg.select('g.root');
  if (root.empty()) {
    root = svg.append('g').attr('class', 'root');
    svg.append('defs').html('<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
      + 'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker>');
    ui.zoom = d3.zoom().scaleExtent([0.05, 3]).on('zoom', ev => root.attr('transform', ev.transform));
    svg.call(ui.zoom).on('dblclick.zoom', null);
  }
  root.selectAll('*').remove();
  // clusters (base value with its derived values)
  for (const id of layout.nodes()) {
    const c = layout.node(id);
    if (!c || !c.cluster) continue;
    root.append('g').attr('class', 'cluster').append('rect')
      .attr('x', c.x - c.width / 2).attr('y', c.y - c.height / 2)
      .attr('width', c.width).attr('height', c.height).attr('rx', 6);
  }
  for (const ref of layout.edges()) {
    const e = layout.edge(ref);
    const line = d3.line().x(p => p.x).y(p => p.y).curve(d3.curveBasis);
    const eg = root.append('g').attr('class', 'edge' + (e.unsatisfied ? ' unsatisfied' : ''))
      .attr('data-from', e.from).attr('data-to', e.to);
    eg.append('path').attr('d', line(e.points)).attr('marker-end', 'url(#arrow)');
    if (e.text) eg.append('text').attr('x', e.x).attr('y', e.y + 4).attr('text-anchor', 'middle').text(e.text);
  }
  for (const id of layout.nodes()) {
    const item = layout.node(id);
    if (!item || item.cluster) continue;
    const state = item.group ? item.state : item.node.state;
    const cls = ['node', item.group ? 'group' : '', item.node && item.node.base ? 'derived' : '',
      item.node && item.node.missing ? 'missing' : '',
      ui.changed.has(id) ? 'changed' : '', ui.selected === id ? 'selected' : ''].join(' ');
    const label = item.group
      ? item.lines.join(', ') + '. Press Enter to open.'
      : id + ', ' + item.lines.slice(1).join(', ');
    const ng = root.append('g').attr('class', cls)
      .attr('transform', 'translate(' + (item.x - item.width / 2) + ',' + (item.y - item.height / 2) + ')')
      .attr('tabindex', 0).attr('role', 'button').attr('aria-label', label)
      .attr('data-key', id).attr('data-state', state)
      .on('click', () => choose(id, item))
      .on('keydown', ev => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); choose(id, item); } });
    ng.append('title').text(item.group ? item.lines.join('\n') : id);
    ng.append('rect').attr('width', item.width).attr('height', item.height).attr('rx', 4)
      .attr('fill', 'var(--' + state + ', #fff)');
    item.lines.forEach((l, i) => ng.append('text').attr('x', 8).attr('y', 18 + 16 * i)
      .attr('class', i === 1 && !item.group ? 'state' : '').text(l));
  }
  fit(layout);
}

function fit(layout) {
  const svg = document.getElementById('graph');
  const gw = layout.graph().width || 1, gh = layout.graph().height || 1;
  const w = svg.clientWidth || 800, h = svg.clientHeight || 600;
  // the whole graph when it fits at half size or more; else its top left at half size (zoom and
  // drag to move, or fold and filter)
  const k = Math.max(0.5, Math.min(1, w / gw, h / gh));
  const x = gw * k < w ? (w - gw * k) / 2 : 0;
  d3.select(svg).call(ui.zoom.transform, d3.zoomIdentity.translate(x, 24).scale(k));
}

function choose(id, item) {
  if (item.group) {
    ui.expanded.add(id);
    render();
    return;
  }
  ui.selected = id;
  d3.selectAll('.node.selected').classed('selected', false);
  d3.selectAll('.node').filter(function () { return this.dataset.key === id; }).classed('selected', true);
  showDetails(id);
  if (filters().neighbourhood) render();
}

// ---------------------------------------------------------------- the selected value

async function showDetails(key) {
  document.getElementById('details-empty').hidden = true;
  document.getElementById('details-body').hidden = false;
  const n = ui.graph.nodes.get(key);
  const set = (id, text) => { document.getElementById(id).textContent = text || '—'; };
  set('d-key', key);
  set('d-descriptor', n && n.descriptor);
  try {
    const st = await api('/scheduler/status?key=' + encodeURIComponent(key));
    const v = n && n.base ? (st.derived_values || []).find(d => d.key === key) || st.value : st.value;
    set('d-state', v.state || 'NONEXISTENT');
    set('d-lastop', v.last_operation);
    set('d-details', (v.details || []).join(', '));
    set('d-error', v.error);
    if (!AVAILABLE.has(v.state || 'NONEXISTENT')) {
      api('/scheduler/explain?key=' + encodeURIComponent(key))
        .then(x => set('d-explain', explainText(x)))
        .catch(e => set('d-explain', String(e.message)));
    } else {
      set('d-explain', 'applied');
    }
  } catch (e) {
    set('d-state', n ? n.state : '');
    set('d-explain', String(e.message));
  }
  try {
    const tl = await api('/scheduler/key-timeline?key=' + encodeURIComponent(key)) || [];
    const last = tl[tl.length - 1];
    set('d-value', last && last.Value ? JSON.stringify(last.Value.ProtoMsgData ?? last.Value, null, 2) : '');
    set('d-metadata', last && last.MetadataFields ? JSON.stringify(last.MetadataFields, null, 2) : '');
    const body = document.querySelector('#d-timeline tbody');
    body.replaceChildren(...tl.slice().reverse().map(r => {
      const tr = document.createElement('tr');
      const f = r.Flags || {};
      [new Date(r.Since).toLocaleTimeString(), f['value-state'], f['last-update'], f.error]
        .forEach(t => { const td = document.createElement('td'); td.textContent = t || ''; tr.append(td); });
      return tr;
    }));
  } catch (e) {
    set('d-value', String(e.message));
  }
}

/** The explain tree as indented lines: key [STATE] and the reason of each cause. */
function explainText(x, depth = 0) {
  if (x == null) return '';
  if (Array.isArray(x)) return x.map(c => explainText(c, depth)).join('');
  if (typeof x !== 'object') return '  '.repeat(depth) + x + '\n';
  let line = '  '.repeat(depth) + (x.key || '') + (x.state ? ' [' + x.state + ']' : '');
  const children = [];
  for (const [k, v] of Object.entries(x)) {
    if (k === 'key' || k === 'state') continue;
    if (Array.isArray(v) && v.length && typeof v[0] === 'object') children.push(v);
    else if (v && typeof v === 'object' && !Array.isArray(v) && v.key) children.push([v]);
    else line += '  ' + k + ': ' + (typeof v === 'string' ? v : JSON.stringify(v));
  }
  return line + '\n' + children.map(c => explainText(c, depth + 1)).join('');
}

// ---------------------------------------------------------------- transaction history

async function loadHistory() {
  const txns = await api('/scheduler/txn-history') || [];
  ui.txns = new Map(txns.map(t => [t.SeqNum, t]));
  const list = document.getElementById('txns');
  const items = txns.slice(-200).reverse().map(t => {
    const li = document.createElement('li');
    const errors = (t.Executed || []).filter(o => o.NewErrMsg);
    if (errors.length) li.classList.add('has-errors');
    if (t.SeqNum === ui.asOfTxn) li.classList.add('chosen');
    li.dataset.seq = t.SeqNum;
    const b = document.createElement('button');
    b.type = 'button';
    b.setAttribute('aria-label', 'Show the graph as of transaction ' + t.SeqNum);
    const head = document.createElement('div');
    head.className = 'txn-head';
    head.textContent = '#' + t.SeqNum + ' ' + t.TxnType + (t.ResyncType ? ' (' + t.ResyncType + ')' : '')
      + ' ' + new Date(t.Start).toLocaleTimeString() + ' — ' + (t.Executed || []).length + ' operations';
    if (errors.length) {
      // said in words (and marked in colour)
      const e = document.createElement('span');
      e.className = 'txn-errors';
      e.textContent = ' — ' + errors.length + (errors.length === 1 ? ' error' : ' errors');
      head.append(e);
    }
    if ((t.Description || '').startsWith('rollback')) {
      // a confirmed commit undone: marked, and its cause said
      li.classList.add('rollback');
      const d = document.createElement('span');
      d.className = 'txn-rollback';
      d.textContent = ' — ' + t.Description;
      head.append(d);
    }
    b.append(head);
    b.addEventListener('click', () => chooseTxn(t.SeqNum));
    li.append(b);
    const ops = document.createElement('ul');
    ops.className = 'ops';
    (t.Executed || []).slice(0, 20).forEach(o => {
      const op = document.createElement('li');
      const flags = OP_FLAGS.filter(([field]) => o[field]).map(([, label]) => label);
      op.textContent = o.Operation + ' ' + o.Key + ' → ' + (o.NewState || '') + (o.NewErrMsg ? ' (' + o.NewErrMsg + ')' : '')
        + (flags.length ? ' [' + flags.join(', ') + ']' : '');
      if (o.NewErrMsg) op.className = 'err';
      ops.append(op);
    });
    if ((t.Executed || []).length > 20) {
      const more = document.createElement('li');
      more.textContent = '… ' + (t.Executed.length - 20) + ' more';
      ops.append(more);
    }
    li.append(ops);
    return li;
  });
  list.replaceChildren(...items);
}

async function chooseTxn(seq) {
  ui.asOfTxn = seq;
  ui.changed = new Set((ui.txns.get(seq)?.Executed || []).map(o => o.Key));
  document.getElementById('asof').hidden = false;
  document.getElementById('asof-seq').textContent = '#' + seq;
  document.querySelectorAll('#txns li').forEach(li => li.classList.toggle('chosen', Number(li.dataset.seq) === seq));
  await loadGraph();
}

// ---------------------------------------------------------------- start

function legend() {
  const ul = document.getElementById('legend');
  for (const s of STATES.slice(0, 10)) {
    const li = document.createElement('li');
    li.textContent = s;
    li.style.setProperty('--swatch', 'var(--' + s + ')');
    ul.append(li);
  }
}

// ---------------------------------------------------------------- northbound problems

/**
 * Shows the input the agent rejected or ignored (GET /northbound/problems) in a banner above the
 * graph: one line per problem, hidden when there is none. Read at start, after every change and
 * every few seconds (a rejected file changes no value, so no event tells of it).
 */
async function loadProblems() {
  let list;
  try {
    list = await api('/northbound/problems');
  } catch (e) {
    return; // an agent that does not list them, or is away: the live badge says so
  }
  const box = document.getElementById('problems');
  const ul = document.getElementById('problems-list');
  ul.replaceChildren();
  for (const p of list) {
    const li = document.createElement('li');
    let where = p.file || p.key || '';
    if (where && p.line) where += ':' + p.line + (p.column ? ':' + p.column : '');
    li.textContent = p.source + (where ? ' ' + where : '') + ': ' + p.message
      + ' (since ' + new Date(p.since).toLocaleTimeString() + ')';
    ul.append(li);
  }
  document.getElementById('problems-title').textContent = list.length === 1
    ? '1 northbound problem: input rejected or ignored'
    : list.length + ' northbound problems: input rejected or ignored';
  box.hidden = list.length === 0;
}

// ---------------------------------------------------------------- confirmed commits

/**
 * Shows the confirmed commit that waits for its confirmation (GET /configuration/pending) with its
 * deadline, counting down, and the buttons that confirm it or roll it back. Read at start, after
 * every change and every second.
 */
async function loadPending() {
  let answer;
  try {
    answer = await api('/configuration/pending');
  } catch (e) {
    return; // an agent without confirmed commits, or away
  }
  const box = document.getElementById('pending');
  const p = answer && answer.pending;
  box.hidden = !p;
  if (!p) return;
  const left = Math.max(0, Math.round((new Date(p.deadline) - Date.now()) / 1000));
  document.getElementById('pending-text').textContent = 'Confirmed commit #' + p.id + ' from '
    + p.source + (p.seqNum >= 0 ? ' (transaction #' + p.seqNum + ')' : '')
    + ' waits for its confirmation: rolled back at ' + new Date(p.deadline).toLocaleTimeString()
    + ' (in ' + left + ' s) unless confirmed.';
}

/** POSTs to the agent (confirm, rollback), then reads the pending commit and the history again. */
async function postAndReload(path) {
  const headers = ui.token ? {Authorization: 'Bearer ' + ui.token} : {};
  try {
    const r = await fetch(path, {method: 'POST', headers});
    if (!r.ok) {
      let msg = r.status + ' ' + r.statusText;
      try { msg = (await r.json()).Error || msg; } catch (e) { /* not JSON */ }
      document.getElementById('pending-text').textContent = path + ': ' + msg;
    }
  } catch (e) {
    document.getElementById('pending-text').textContent = NO_ANSWER;
  }
  await Promise.all([loadPending(), loadHistory()]);
}

async function start() {
  legend();
  let debounce = null;
  // typing fires input; choosing in a list or ticking a box fires change (input too, in most
  // browsers): either draws again, once
  for (const type of ['input', 'change']) {
    document.getElementById('filters').addEventListener(type, () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => { ui.expanded.clear(); render(); }, 200);
    });
  }
  document.getElementById('filters').addEventListener('submit', ev => ev.preventDefault());
  document.getElementById('asof-back').addEventListener('click', async () => {
    ui.asOfTxn = null;
    document.getElementById('asof').hidden = true;
    document.querySelectorAll('#txns li.chosen').forEach(li => li.classList.remove('chosen'));
    await loadGraph();
  });
  try {
    const v = await api('/info/version');
    document.getElementById('agent').textContent = (v.App || 'agent') + ' ' + (v.Version || '');
  } catch (e) { /* the version is only decoration */ }
  try {
    showFleet(await api('/info/label'));
  } catch (e) { /* as the version */ }
  document.getElementById('pending-confirm').addEventListener('click', () => postAndReload('/configuration/confirm'));
  document.getElementById('pending-rollback').addEventListener('click', () => postAndReload('/configuration/rollback'));
  follow();
  setInterval(loadProblems, 3000);
  setInterval(loadPending, 1000);
  await Promise.all([loadGraph(), loadHistory(), loadProblems(), loadPending()]);
}

// With etcd, the agent is one of a fleet: a link to the fleet view when the agent knows where it
// is served (its fleet-url setting), else how to serve one.
function showFleet(label) {
  const el = document.getElementById('fleet');
  if (!label || label.state === 'NONE') return;
  el.replaceChildren();
  if (label.fleet_url) {
    const a = document.createElement('a');
    a.href = label.fleet_url;
    a.rel = 'noopener';
    a.textContent = 'fleet view';
    el.append(a);
  } else {
    el.textContent = 'fleet view: run kvsctl fleet --serve PORT with this agent\'s etcd' +
        ' settings, and give its URL to the agent as fleet-url';
  }
  el.title = 'label ' + label.label + ' (' + label.state + ')';
  el.hidden = false;
}

document.addEventListener('DOMContentLoaded', start);
