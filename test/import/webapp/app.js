// A small application as one is written against PocketBase: people sign up and wait for an
// administrator of the app (a user whose `role` is "admin") to approve them; whoever is signed in
// shows as online through a `presence` record keyed by their id, which carries their email.
// `?db=` names the Cairn database (sent as x-dbname), `?presence=1` turns presence on.
const params = new URLSearchParams(location.search);
const pb = new PocketBase(params.get('api'));
const db = params.get('db');
if (db) {
  pb.beforeSend = (url, options) => {
    options.headers = Object.assign({}, options.headers, { 'x-dbname': db });
    return { url, options };
  };
}
const users = pb.collection('users');
const withPresence = params.get('presence') === '1';
const $ = (id) => document.getElementById(id);
const ONLINE_MS = 60_000;

function currentUser() {
  return pb.authStore.record ?? pb.authStore.model ?? null;
}

function describe(err) {
  const data = err?.response?.data ?? err?.data?.data ?? {};
  const fields = Object.entries(data).map(([k, v]) => `${k}: ${v.code}`).join(', ');
  return `${err?.status ?? ''} ${fields || err?.message || err}`.trim();
}

async function markOnline(user) {
  if (!withPresence) return;
  const record = { email: user.email, lastSeen: new Date().toISOString() };
  const presence = pb.collection('presence');
  try {
    await presence.update(user.id, record);
  } catch (err) {
    if (err.status !== 404) throw err;
    await presence.create({ id: user.id, ...record });
  }
}

async function showPresence() {
  if (!withPresence || !pb.authStore.isValid) return;
  const list = await pb.collection('presence').getFullList({ sort: '-lastSeen' });
  const now = Date.now();
  $('presence').replaceChildren(
    ...list
      .filter((p) => p.email && now - Date.parse(p.lastSeen) < ONLINE_MS)
      .map((p) => Object.assign(document.createElement('li'), { textContent: p.email })),
  );
}

async function showPending() {
  const user = currentUser();
  $('admin').hidden = !(user && user.role === 'admin');
  if ($('admin').hidden) return;
  const pending = await users.getFullList({ filter: 'role = "pending"', sort: 'created' });
  $('pending').replaceChildren(
    ...pending.map((p) => {
      const li = document.createElement('li');
      // Emails are not public (emailVisibility): the app shows names.
      const who = p.name || p.username || p.id;
      li.textContent = `${who} `;
      const approve = Object.assign(document.createElement('button'), { type: 'button', textContent: `Approve ${who}` });
      approve.addEventListener('click', async () => {
        try {
          await users.update(p.id, { role: 'user' });
          li.remove();
        } catch (err) {
          li.textContent = `Approving failed: ${describe(err)}`;
        }
      });
      li.append(approve);
      return li;
    }),
  );
}

async function refresh() {
  const user = currentUser();
  $('status').textContent = user && pb.authStore.isValid ? `Signed in as ${user.email || user.username} (${user.role ?? 'member'})` : 'Signed out';
  await showPending();
  await showPresence();
}

$('signup-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const body = { email: form.get('email'), password: form.get('password'), passwordConfirm: form.get('password') };
  if (form.get('username')) body.username = form.get('username');
  if (form.get('name')) body.name = form.get('name');
  // The app's own role: new people wait for approval.
  if (withPresence) body.role = 'pending';
  try {
    const created = await users.create(body);
    $('signup-result').textContent = `Welcome ${created.username || created.name || form.get('email')}: ${created.role ? `your role is ${created.role}` : 'you can sign in'}`;
  } catch (err) {
    $('signup-result').textContent = `Sign-up failed: ${describe(err)}`;
  }
});

$('signin-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  try {
    const auth = await users.authWithPassword(String(form.get('identity')), String(form.get('password')));
    await markOnline(auth.record);
  } catch (err) {
    $('status').textContent = `Sign-in failed: ${describe(err)}`;
    return;
  }
  await refresh();
});

$('signout').addEventListener('click', async () => {
  pb.authStore.clear();
  await refresh();
});

refresh().catch((err) => ($('status').textContent = `Failed: ${describe(err)}`));
