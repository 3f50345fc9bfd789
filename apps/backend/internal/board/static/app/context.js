// State shared by the views: the workspace the operator is looking at.
import { api } from './api.js';
import { WORKSPACE_LIST } from './contract.js';

export const ctx = {
  workspaceId: '',
  workspaces: [],
};

// loadWorkspaces reads the workspaces once and picks the first by default.
export async function loadWorkspaces() {
  ctx.workspaces = await api.listAll(WORKSPACE_LIST);
  if (!ctx.workspaces.some((w) => w.id === ctx.workspaceId)) ctx.workspaceId = ctx.workspaces[0] ? ctx.workspaces[0].id : '';
  return ctx.workspaces;
}

// useWorkspace switches the current workspace and follows its events
// (announced to the page as a "workspace" event when it changed).
export async function useWorkspace(id) {
  if (!id) return;
  const switched = ctx.workspaceId !== id;
  if (ctx.workspaceId && switched) await api.unsubscribe(`workspace:${ctx.workspaceId}`);
  ctx.workspaceId = id;
  await api.subscribe(`workspace:${id}`);
  if (switched) api.emit('workspace', { id });
}

// scopeBadge names the workspace a profile belongs to (none for a global
// profile, which every workspace's tasks may use).
export function scopeBadge(h, profile) {
  if (!profile.workspace_id) return null;
  const ws = ctx.workspaces.find((w) => w.id === profile.workspace_id);
  return h('span', { class: 'badge', title: 'Only this workspace lists, changes and uses it' }, `Workspace ${ws ? ws.name : profile.workspace_id}`);
}
