// Settings › Workspaces: create workspaces, rename and describe them, and
// register their repositories (a local checkout inside the source roots
// the operator allows, or a remote URL) and change a repository's default
// branch. The backend checks every local path (fsguard): its refusal says
// which rule the path broke, never the path, and is shown next to it.
import { api } from './api.js';
import { h, toast } from './dom.js';
import { ctx, loadWorkspaces } from './context.js';
import { form } from './form.js';
import { reloadOn } from './config.js';
import {
  REPOSITORY_CREATE, REPOSITORY_CREATED, REPOSITORY_LIST, REPOSITORY_UPDATE, REPOSITORY_UPDATED,
  WORKSPACE_CREATE, WORKSPACE_UPDATE
} from './contract.js';

// again re-renders the page: workspaces have no events of their own, and
// only the current workspace's repository events reach the board.
const again = () => window.dispatchEvent(new HashChangeEvent('hashchange'));

// given drops the empty text fields of a form's values: an optional field
// left blank is omitted, not sent as "".
function given(v) {
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== ''));
}

export async function renderWorkspaces(el) {
  const workspaces = await loadWorkspaces();
  const repos = await Promise.all(workspaces.map((w) => api.listAll(REPOSITORY_LIST, { workspace_id: w.id })));
  el.append(h('h2', {}, 'New workspace'), form({
    fields: [{ name: 'name', label: 'Name' }, { name: 'description', label: 'Description', type: 'textarea', rows: 2 }],
    submitLabel: 'Create workspace',
    submit: (v) => api.request(WORKSPACE_CREATE, given(v)),
    onDone: (w) => { toast(`Workspace “${w.name}” created`); again(); },
  }));
  workspaces.forEach((w, i) => el.append(workspaceSection(w, repos[i])));
  return reloadOn(api, [REPOSITORY_CREATED, REPOSITORY_UPDATED]);
}

function workspaceSection(w, repos) {
  return h('section', { class: 'panel', 'aria-label': `Workspace ${w.name}`, dataset: { workspace: w.id } },
    h('h2', {}, w.name, w.id === ctx.workspaceId ? h('span', { class: 'badge' }, 'On the board') : null),
    w.description ? h('p', { class: 'hint' }, w.description) : null,
    h('details', { class: 'edit', dataset: { edit: 'workspace' } }, h('summary', {}, 'Rename or describe'), form({
      fields: [{ name: 'name', label: 'Name', value: w.name }, { name: 'description', label: 'Description', type: 'textarea', rows: 2, value: w.description }],
      submit: (v) => api.request(WORKSPACE_UPDATE, { id: w.id, ...v }),
      onDone: () => { toast('Workspace saved'); again(); },
    })),
    h('h3', {}, 'Repositories'),
    repos.length ? repos.map(repoRow) : h('p', { class: 'hint' }, 'No repository yet: tasks of this workspace work in a folder of their own.'),
    h('details', { class: 'edit', dataset: { edit: 'repository' } }, h('summary', {}, 'Register a repository'), form({
      fields: [
        { name: 'name', label: 'Name', help: 'Default: the last segment of its path or URL.' },
        { name: 'local_path', label: 'Local checkout', placeholder: '/home/you/src/project',
          help: 'An absolute path on the machine running Kandev, inside the source roots it allows (kandev serve --source-roots).' },
        { name: 'remote_url', label: 'Remote URL', placeholder: 'https://github.com/owner/repo.git' },
        { name: 'default_branch', label: 'Default branch', placeholder: 'main', help: 'The branch tasks start from; default main.' },
      ],
      submitLabel: 'Register repository',
      submit: (v) => api.request(REPOSITORY_CREATE, { workspace_id: w.id, ...given(v) }),
      onDone: (r) => { toast(`Repository “${r.name}” registered`); again(); },
    })));
}

function repoRow(r) {
  return h('div', { class: 'step-row', dataset: { repository: r.id } },
    h('div', { class: 'actions' }, h('strong', {}, r.name), h('span', { class: 'badge' }, `Branch ${r.default_branch}`)),
    r.local_path ? h('p', { class: 'hint' }, 'Local checkout: ', h('code', {}, r.local_path)) : null,
    r.remote_url ? h('p', { class: 'hint' }, 'Remote: ', h('code', {}, r.remote_url)) : null,
    h('details', { class: 'edit' }, h('summary', {}, `Edit ${r.name}`), form({
      fields: [{ name: 'default_branch', label: 'Default branch', value: r.default_branch }],
      submit: (v) => api.request(REPOSITORY_UPDATE, { id: r.id, ...v }),
      onDone: () => { toast('Repository saved'); again(); },
    })));
}
