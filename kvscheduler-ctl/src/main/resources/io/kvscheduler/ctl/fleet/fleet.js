'use strict';
// The fleet view of `kvsctl fleet --serve`: the JSON of /fleet.json, again on every event of
// /events (sent when etcd changes and at least every 10 s); polls /fleet.json when events fail.

const $ = id => document.getElementById(id);

function cell(row, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
}

function values(v) {
  const parts = Object.entries(v || {}).map(([state, n]) => state + ' ' + n);
  return parts.length ? parts.join(', ') : '-';
}

function ago(s) {
  if (s < 120) return s + 's ago';
  if (s < 7200) return Math.floor(s / 60) + 'm ago';
  if (s < 172800) return Math.floor(s / 3600) + 'h ago';
  return Math.floor(s / 86400) + 'd ago';
}

function render(fleet) {
  const body = $('agents').tBodies[0];
  body.replaceChildren();
  for (const a of fleet.agents) {
    const tr = document.createElement('tr');
    tr.dataset.label = a.label;
    if (!a.ok) tr.className = 'bad';
    cell(tr, a.label);
    cell(tr, a.state, a.ok ? 'state-ok' : 'state-bad');
    cell(tr, a.owner ? (a.owner.host + ' pid ' + a.owner.pid) : '-');
    cell(tr, a.version || '');
    cell(tr, a.last_status_age_seconds == null ? '-' : ago(a.last_status_age_seconds));
    cell(tr, !a.lease ? '-' : a.lease.remaining_seconds < 0 ? 'expired'
        : a.lease.not_renewed_seconds + 's/' + a.lease.ttl_seconds + 's');
    cell(tr, values(a.values));
    cell(tr, String((a.northbound_problems || []).length));
    cell(tr, (a.issues || []).join('; '));
    body.appendChild(tr);
  }
  $('empty').hidden = fleet.agents.length > 0;
  const bad = fleet.agents.filter(a => !a.ok).length;
  $('summary').textContent = fleet.agents.length + ' agent(s), ' +
      (bad ? bad + ' not well' : 'all well') + ' — read at ' + fleet.read_at;
  $('error').hidden = !fleet.etcd_error;
  $('error').textContent = fleet.etcd_error ? 'etcd could not be read: ' + fleet.etcd_error : '';
}

async function poll() {
  try {
    const r = await fetch('/fleet.json');
    if (r.ok) render(await r.json());
  } catch (e) {
    $('live').textContent = 'no answer from kvsctl';
  }
}

let polling = null;
function follow() {
  const events = new EventSource('/events');
  events.addEventListener('status', e => {
    render(JSON.parse(e.data));
    $('live').textContent = 'live';
  });
  events.onopen = () => {
    $('live').textContent = 'live';
    if (polling) { clearInterval(polling); polling = null; }
  };
  events.onerror = () => {
    $('live').textContent = 'reconnecting…';
    if (!polling) polling = setInterval(poll, 10000);
  };
}

poll();
follow();
