// cadre dashboard: one WebSocket (a snapshot, then deltas), three views
// chosen by the URL's hash: #/ the jobs, #/job/NS/NAME a job, #/cluster.
// Text from the cluster is only ever set as textContent, never as HTML.
'use strict';

const PAGE = 50;  // rows per page of the job list: 500 jobs stay usable
const state = {
  jobs: new Map(), queue: [], cluster: { nodes: [], gpuHistory: [] },
  connected: false, apiConnected: true, scope: '',
  job: null, logs: new Map(), page: 0,
  filter: { ns: '', phase: '', name: '' },
};
let ws = null;
let retryMs = 500;

function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'width') e.style.width = v;  // CSSOM: the CSP refuses style attributes
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

function age(ts) {
  if (!ts) return '-';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h' + Math.floor((s % 3600) / 60) + 'm';
  return Math.floor(s / 86400) + 'd';
}

function badge(phase) {
  return h('span', { class: 'badge phase-' + phase, 'data-phase': phase }, phase);
}

// A job's part in preemption (docs/design.md 3.5): who stopped it last, how many it stops.
function preemptNote(j) {
  const notes = [];
  if (j.preemptedBy) notes.push('preempted by ' + j.preemptedBy);
  if (j.preempting) notes.push('preempting ' + j.preempting + ' job' + (j.preempting === 1 ? '' : 's'));
  return notes.length ? h('span', { class: 'muted preempt' }, ' ' + notes.join(', ')) : null;
}

// Restarts and, when there were any, the preemptions among the job's attempts.
function restartsText(j) {
  return String(j.restarts + j.infraRestarts) + (j.preemptions ? ' (' + j.preemptions + ' preempted)' : '');
}

function connect() {
  const proto = location.protocol === 'https:' ? 'wss://' : 'ws://';
  ws = new WebSocket(proto + location.host + '/ws', 'cadre-dash');
  ws.onopen = () => { retryMs = 500; state.connected = true; watchCurrent(); render(); };
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => {
    state.connected = false;
    render();
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5000);
  };
}

function onMessage(m) {
  if (m.type === 'snapshot') {
    state.jobs = new Map(m.jobs.map((j) => [j.key, j]));
    state.queue = m.queue; state.cluster = m.cluster; state.scope = m.scope;
    state.apiConnected = m.connected;
  } else if (m.type === 'delta') {
    if (m.jobs) {
      for (const j of m.jobs.upsert) state.jobs.set(j.key, j);
      for (const k of m.jobs.delete) state.jobs.delete(k);
    }
    state.queue = m.queue; state.apiConnected = m.connected;
    if (m.cluster) state.cluster = m.cluster;
  } else if (m.type === 'job') {
    if (route().key === m.key) state.job = m;
  } else if (m.type === 'log') {
    if (route().key !== m.key) return;
    const lines = state.logs.get(m.rank) || [];
    for (const l of m.lines) lines.push(l);
    if (lines.length > 500) lines.splice(0, lines.length - 500);
    state.logs.set(m.rank, lines);
    if (m.error) state.logError = m.error;
  }
  render();
}

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  if (parts[0] === 'job' && parts.length >= 3)
    return { view: 'job', key: decodeURIComponent(parts[1]) + '/' + decodeURIComponent(parts[2]) };
  if (parts[0] === 'cluster') return { view: 'cluster' };
  return { view: 'jobs' };
}

function watchCurrent() {
  const r = route();
  if (ws && ws.readyState === 1) ws.send(JSON.stringify({ watch: r.view === 'job' ? r.key : null }));
}

window.addEventListener('hashchange', () => {
  state.job = null; state.logs = new Map(); state.logError = null; state.actionError = null;
  watchCurrent(); render();
});

function confirmThen(text, fn) {
  const modal = document.getElementById('modal');
  document.getElementById('modal-text').textContent = text;
  modal.hidden = false;
  const yes = document.getElementById('modal-yes'), no = document.getElementById('modal-no');
  const close = () => { modal.hidden = true; yes.onclick = null; no.onclick = null; };
  yes.onclick = () => { close(); fn(); };
  no.onclick = close;
}

async function act(job, verb) {
  state.actionError = null;
  try {
    const r = await fetch('/api/jobs/' + encodeURIComponent(job.namespace) + '/' +
                          encodeURIComponent(job.name) + '/' + verb, { method: 'POST' });
    const text = await r.text();
    let body;
    try { body = JSON.parse(text); } catch (e) { body = { message: text.trim() }; }
    if (!body.ok) state.actionError = verb + ' refused by the API server (' + (body.status || r.status) + '): ' +
                                           (body.message || body.reason || r.statusText);
  } catch (e) {
    state.actionError = verb + ': ' + e;
  }
  render();
}

function actionButtons(j) {
  const done = j.phase === 'Succeeded' || j.phase === 'Failed';
  return h('div', { class: 'actions' },
    h('button', { id: 'btn-cancel', class: 'danger', disabled: done,
      onclick: () => confirmThen('Cancel job ' + j.name + '? It is deleted and its pods stop.',
                                 () => act(j, 'cancel')) }, 'Cancel'),
    j.suspended
      ? h('button', { id: 'btn-resume', onclick: () => confirmThen('Resume job ' + j.name + '?',
                                                                  () => act(j, 'resume')) }, 'Resume')
      : h('button', { id: 'btn-suspend', disabled: done,
          onclick: () => confirmThen('Suspend job ' + j.name + '? Its pods stop; it can be resumed.',
                                     () => act(j, 'suspend')) }, 'Suspend'));
}

function filteredJobs() {
  const f = state.filter;
  return [...state.jobs.values()]
    .filter((j) => (!f.ns || j.namespace === f.ns) && (!f.phase || j.phase === f.phase) &&
                   (!f.name || j.name.includes(f.name) || j.jobId === f.name))
    .sort((a, b) => (b.created || '').localeCompare(a.created || '') || a.key.localeCompare(b.key));
}

function filters() {
  const namespaces = [...new Set([...state.jobs.values()].map((j) => j.namespace))].sort();
  const phases = ['Pending', 'Queued', 'Starting', 'Running', 'Restarting', 'Succeeded', 'Failed', 'Suspended'];
  const set = (k) => (e) => { state.filter[k] = e.target.value; state.page = 0; render(); };
  const sel = (id, k, all, items) => h('select', { id, onchange: set(k) },
    h('option', { value: '' }, all),
    items.map((v) => h('option', { value: v, selected: state.filter[k] === v }, v)));
  const name = h('input', { id: 'f-name', placeholder: 'name or job id', value: state.filter.name });
  name.addEventListener('input', set('name'));
  return h('div', { class: 'filters' }, sel('f-ns', 'ns', 'all namespaces', namespaces),
           sel('f-phase', 'phase', 'all phases', phases), name);
}

function jobsView() {
  const rows = filteredJobs();
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  state.page = Math.min(state.page, pages - 1);
  const shown = rows.slice(state.page * PAGE, (state.page + 1) * PAGE);
  const table = h('table', { id: 'jobs' },
    h('thead', {}, h('tr', {}, ['Name', 'Job id', 'Namespace', 'Phase', 'Nodes', 'Accelerators',
      'Queue', 'Waiting because', 'Age', 'Restarts'].map((t) => h('th', {}, t)))),
    h('tbody', {}, shown.map((j) => h('tr', { 'data-key': j.key, 'data-phase': j.phase,
                                'data-phases': (j.phasesSeen || []).join(','),
                                title: 'phases so far: ' + (j.phasesSeen || []).join(' → ') },
      h('td', {}, h('a', { href: '#/job/' + encodeURIComponent(j.namespace) + '/' +
                           encodeURIComponent(j.name) }, j.name)),
      h('td', {}, j.jobId || '-'), h('td', {}, j.namespace), h('td', {}, badge(j.phase), preemptNote(j)),
      h('td', {}, j.ready + '/' + j.total), h('td', {}, j.accelerators || '-'),
      h('td', {}, j.queuePosition ? '#' + j.queuePosition : '-'),
      h('td', { class: 'why' }, j.reason ? j.reason + (j.message ? ': ' + j.message : '') : ''),
      h('td', {}, age(j.created)), h('td', {}, restartsText(j))))));
  const pager = h('div', { class: 'pager' },
    h('button', { id: 'prev', disabled: state.page === 0, onclick: () => { state.page--; render(); } }, '<'),
    'page ' + (state.page + 1) + ' of ' + pages + ' (' + rows.length + ' jobs)',
    h('button', { id: 'next', disabled: state.page >= pages - 1,
                  onclick: () => { state.page++; render(); } }, '>'));
  return [h('h1', {}, 'Jobs'), filters(), table, pager];
}

function jobLink(key) {
  return h('a', { href: '#/job/' + key.split('/').map(encodeURIComponent).join('/') }, key);
}

// The job page's preemption lines: by whom it was last preempted, whom it is preempting.
function preemptionRows(d) {
  const rows = [];
  const p = d.preemption;
  if (p) rows.push(h('div', {}, 'Preempted by'), h('div', { id: 'preempted-by' }, jobLink(p.preemptor),
    ' (tier ' + p.tier + ') at ' + p.time + ': ' + (p.mode === 'Cancel' ? 'cancelled' : 'requeued') +
    ' after ' + p.graceSeconds + ' s of grace'));
  if (d.preempting && d.preempting.length)
    rows.push(h('div', {}, 'Preempting'), h('div', { id: 'preempting' },
      d.preempting.length + ' job' + (d.preempting.length === 1 ? '' : 's') + ': ',
      d.preempting.map((v, i) => [i ? ', ' : '', jobLink(v.job)])));
  return rows;
}

function jobView(key) {
  const d = state.job, j = d && d.job;
  if (d && d.gone) return [h('h1', {}, key), h('p', { id: 'gone' }, 'This job no longer exists.'),
                           h('a', { href: '#/' }, 'back to the jobs')];
  if (!j) return [h('h1', {}, key), h('p', { class: 'muted' }, 'loading...')];
  const out = [h('h1', {}, j.name + ' ', badge(j.phase)), actionButtons(j)];
  if (state.actionError) out.push(h('div', { class: 'error', id: 'action-error' }, state.actionError));
  out.push(h('div', { class: 'card kv' },
    h('div', {}, 'Job id'), h('div', {}, j.jobId || '-'),
    h('div', {}, 'Namespace'), h('div', {}, j.namespace),
    h('div', {}, 'Phases so far'), h('div', { id: 'phases' }, (j.phasesSeen || []).join(' → ') || '-'),
    h('div', {}, 'Nodes ready'), h('div', {}, j.ready + '/' + j.total),
    h('div', {}, 'Accelerators'), h('div', {}, j.accelerators || '-'),
    h('div', {}, 'Queue'), h('div', {}, (j.queue || 'default') + (j.queuePosition ? ', position ' + j.queuePosition : '')),
    h('div', {}, 'Waiting because'), h('div', {}, j.reason ? j.reason + ': ' + j.message : '-'),
    h('div', {}, 'Age'), h('div', {}, age(j.created)),
    h('div', {}, 'Restarts'), h('div', {}, j.restarts + ' (+' + j.infraRestarts + ' after node loss' +
      (j.requeues ? ', +' + j.requeues + ' requeued' : '') +
      (j.preemptions ? ', +' + j.preemptions + ' preempted' : '') + ')'),
    preemptionRows(d)));
  if (d.lastFailure) {
    const f = d.lastFailure;
    out.push(h('h2', {}, 'Last failure'), h('div', { class: 'card', id: 'last-failure' },
      'rank ' + f.rank + ' (pod ' + f.pod + ', node ' + (f.node || '-') + '): exit code ' + f.exitCode +
      (f.reason ? ', ' + f.reason : '') + (f.message ? ': ' + f.message : '')));
  }
  out.push(h('h2', {}, 'Ranks'), h('table', { id: 'ranks' },
    h('thead', {}, h('tr', {}, ['Rank', 'Pod', 'Node', 'IP', 'Phase', 'Exit code'].map((t) => h('th', {}, t)))),
    h('tbody', {}, d.ranks.map((r) => h('tr', { 'data-rank': r.rank },
      h('td', {}, r.rank), h('td', {}, r.pod || '-'), h('td', {}, r.node || '-'), h('td', {}, r.ip || '-'),
      h('td', {}, r.phase || '-'), h('td', {}, r.exitCode === null ? '-' : r.exitCode + (r.reason ? ' (' + r.reason + ')' : '')))))));
  out.push(h('div', { class: 'grid2' },
    h('div', {}, h('h2', {}, 'Conditions'), h('ul', { class: 'timeline', id: 'conditions' },
      d.conditions.map((c) => h('li', { class: c.status },
        h('b', {}, c.type + ' ' + c.status), ' ', h('span', { class: 'muted' }, c.lastTransitionTime),
        h('div', {}, c.reason + (c.message ? ': ' + c.message : '')))))),
    h('div', {}, h('h2', {}, 'Events'), h('table', { id: 'events' },
      h('tbody', {}, d.events.map((e) => h('tr', {}, h('td', {}, e.time), h('td', {}, e.type),
        h('td', {}, e.reason), h('td', { class: 'why' }, e.message + (e.count > 1 ? ' (x' + e.count + ')' : '')))))))));
  const log = h('pre', { class: 'log', id: 'log' });
  for (const rank of [...state.logs.keys()].sort((a, b) => a - b))
    for (const line of state.logs.get(rank))
      log.append(h('span', { class: 'rank' }, rank + ': '), line + '\n');
  out.push(h('h2', {}, 'Logs'), state.logError ? h('div', { class: 'error' }, state.logError) : null,
           state.logs.size ? log : h('p', { class: 'muted' }, 'no log lines yet'));
  return out;
}

// history: the server's samples, [[t, used, total], ...]; used/total: now, from the nodes.
function chart(samples, usedNow, totalNow) {
  const history = samples.concat([[Date.now() / 1000, usedNow, totalNow]]);
  const W = 640, H = 160, P = 30, ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('class', 'chart'); svg.setAttribute('id', 'gpu-chart');
  svg.setAttribute('width', W); svg.setAttribute('height', H);
  const el = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e); return e;
  };
  const now = Date.now() / 1000, t0 = now - 3600;
  const max = Math.max(1, ...history.map((s) => s[2]));
  const x = (t) => P + (W - 2 * P) * Math.max(0, (t - t0) / 3600);
  const y = (v) => H - P - (H - 2 * P) * (v / max);
  el('line', { x1: P, y1: H - P, x2: W - P, y2: H - P, stroke: '#8a93a5' });
  el('line', { x1: P, y1: P, x2: P, y2: H - P, stroke: '#8a93a5' });
  el('text', { x: 2, y: P + 4, 'font-size': 11, fill: '#6b7385' }, String(max));
  el('text', { x: P, y: H - 8, 'font-size': 11, fill: '#6b7385' }, '-60 min');
  el('text', { x: W - P - 20, y: H - 8, 'font-size': 11, fill: '#6b7385' }, 'now');
  if (history.length) {
    const pts = history.map((s) => x(s[0]) + ',' + y(s[1])).join(' ');
    el('polyline', { points: pts,
                     fill: 'none', stroke: '#2f6fdb', 'stroke-width': 2 });
    el('polyline', { points: history.map((s) => x(s[0]) + ',' + y(s[2])).join(' '),
                     fill: 'none', stroke: '#c98a0a', 'stroke-dasharray': '4 3' });
  }
  return svg;
}

// The cluster's topology levels (ClusterTopology default, coarse to fine): for each level
// its nodes carry, the domains with their free nodes and GPUs (docs/topology.md).
function topologyView(levels) {
  if (!levels.length) return null;
  return [h('h2', {}, 'Topology'),
    h('table', { id: 'topology' },
      h('thead', {}, h('tr', {}, ['Level', 'Domain', 'Nodes', 'Free nodes', 'Free GPUs'].map((t) => h('th', {}, t)))),
      h('tbody', {}, levels.map((l) => l.domains.map((d) => h('tr', { 'data-level': l.label, 'data-domain': d.value },
        h('td', { title: l.label }, l.name), h('td', {}, d.value), h('td', {}, d.nodes),
        h('td', {}, d.freeNodes), h('td', {}, d.freeGpus + '/' + d.gpus))))))];
}

function clusterView() {
  const nodes = state.cluster.nodes || [];
  const used = nodes.reduce((a, n) => a + n.used, 0), total = nodes.reduce((a, n) => a + n.allocatable, 0);
  return [h('h1', {}, 'Cluster'),
    h('p', {}, used + ' of ' + total + ' GPUs in use on ' + nodes.length + ' GPU nodes'),
    h('table', { id: 'nodes' },
      h('thead', {}, h('tr', {}, ['Node', 'Ready', 'GPU', 'Used', 'Free', '', 'Held by'].map((t) => h('th', {}, t)))),
      h('tbody', {}, nodes.map((n) => h('tr', { 'data-node': n.name },
        h('td', {}, n.name), h('td', {}, n.ready ? 'yes' : 'no'), h('td', {}, n.product || n.resource),
        h('td', {}, n.used + '/' + n.allocatable), h('td', {}, n.free),
        h('td', {}, h('span', { class: 'bar' }, h('span', { width: (100 * n.used / Math.max(1, n.allocatable)) + '%' }))),
        h('td', {}, n.jobs.map((j, i) => [i ? ', ' : '', h('a', { href: '#/job/' + j.key.split('/').map(encodeURIComponent).join('/') }, j.key), ' (' + j.count + ')'])))))),
    topologyView(state.cluster.topology || []),
    h('h2', {}, 'Admission queue'),
    state.queue.length ? h('ol', { id: 'queue' }, state.queue.map((k) => {
      const j = state.jobs.get(k);
      return h('li', {}, h('a', { href: '#/job/' + k.split('/').map(encodeURIComponent).join('/') }, k),
               j && j.reason ? ' ' + j.reason : '');
    })) : h('p', { class: 'muted', id: 'queue' }, 'no job waits'),
    h('h2', {}, 'GPUs in use, last hour'), chart(state.cluster.gpuHistory || [], used, total)];
}

function render() {
  const r = route();
  const conn = document.getElementById('conn');
  const live = state.connected && state.apiConnected;
  conn.className = 'conn ' + (live ? 'live' : state.connected ? 'disconnected' : 'connecting');
  conn.textContent = live ? 'live' : 'disconnected';
  document.getElementById('banner').hidden = live;
  document.getElementById('scope').textContent = state.scope ? 'namespace ' + state.scope : 'all namespaces';
  document.getElementById('nav-jobs').className = r.view === 'jobs' ? 'active' : '';
  document.getElementById('nav-cluster').className = r.view === 'cluster' ? 'active' : '';
  const view = document.getElementById('view');
  const focus = document.activeElement && document.activeElement.id;
  const kids = r.view === 'job' ? jobView(r.key) : r.view === 'cluster' ? clusterView() : jobsView();
  view.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined));
  if (focus && focus.startsWith('f-')) {
    const e = document.getElementById(focus);
    if (e) { e.focus(); if (e.setSelectionRange && e.value) e.setSelectionRange(e.value.length, e.value.length); }
  }
}

render();
connect();
setInterval(() => { if (route().view === 'jobs') render(); }, 10000);  // ages
