// Code generated from package kanban by TestContractJS
// (go test ./internal/board -run TestContractJS -update). DO NOT EDIT.
//
// What the board shares with the backend: the name of every action the
// WebSocket API serves and of every event it publishes, and the bounds and
// enums the board's forms state. A module imports what it uses by name, so
// a misspelt name stops the page from loading instead of failing quietly.

// Actions.
export const AGENT_LIST = 'agent.list';
export const AGENT_PROFILE_CREATE = 'agent.profile.create';
export const AGENT_PROFILE_DELETE = 'agent.profile.delete';
export const AGENT_PROFILE_LIST = 'agent.profile.list';
export const AGENT_PROFILE_UPDATE = 'agent.profile.update';
export const AGENT_UPDATE = 'agent.update';
export const ARTIFACT_CREATE = 'artifact.create';
export const ARTIFACT_DELETE = 'artifact.delete';
export const ARTIFACT_LATEST = 'artifact.latest';
export const ARTIFACT_LIST = 'artifact.list';
export const DIAGNOSTIC_BUNDLE_CREATE = 'diagnostic_bundle.create';
export const DOCUMENT_GET = 'document.get';
export const DOCUMENT_LIST = 'document.list';
export const DOCUMENT_WRITE = 'document.write';
export const EXECUTOR_LIST = 'executor.list';
export const EXECUTOR_PROFILE_CREATE = 'executor.profile.create';
export const EXECUTOR_PROFILE_DELETE = 'executor.profile.delete';
export const EXECUTOR_PROFILE_LIST = 'executor.profile.list';
export const EXECUTOR_PROFILE_UPDATE = 'executor.profile.update';
export const MCP_CONFIG_GET = 'mcp_config.get';
export const MCP_CONFIG_UPDATE = 'mcp_config.update';
export const MESSAGE_LIST = 'message.list';
export const PERMISSION_LIST = 'permission.list';
export const PERMISSION_RESOLVE = 'permission.resolve';
export const PLAN_CREATE = 'plan.create';
export const PLAN_DELETE = 'plan.delete';
export const PLAN_GET = 'plan.get';
export const PLAN_REVISIONS = 'plan.revisions';
export const PLAN_UPDATE = 'plan.update';
export const QUESTION_ANSWER = 'question.answer';
export const QUESTION_ASK = 'question.ask';
export const QUESTION_ASK_PARENT = 'question.ask_parent';
export const QUESTION_GET = 'question.get';
export const QUESTION_LIST = 'question.list';
export const REPOSITORY_CREATE = 'repository.create';
export const REPOSITORY_LIST = 'repository.list';
export const REPOSITORY_UPDATE = 'repository.update';
export const SESSION_ATTACH = 'session.attach';
export const SESSION_CREATE = 'session.create';
export const SESSION_GET = 'session.get';
export const SESSION_LIST = 'session.list';
export const SESSION_PROFILE = 'session.profile';
export const SESSION_SET_MODE = 'session.set_mode';
export const SESSION_SPAWN = 'session.spawn';
export const SESSION_STOP = 'session.stop';
export const SESSION_TOKEN = 'session.token';
export const STEP_COMPLETE = 'step.complete';
export const STEP_DECIDE = 'step.decide';
export const SUBSCRIBE = 'subscribe';
export const TASK_ARCHIVE = 'task.archive';
export const TASK_CREATE = 'task.create';
export const TASK_DELETE = 'task.delete';
export const TASK_DEPENDENCY_ADD = 'task.dependency.add';
export const TASK_DEPENDENCY_LIST = 'task.dependency.list';
export const TASK_DEPENDENCY_REMOVE = 'task.dependency.remove';
export const TASK_GET = 'task.get';
export const TASK_LIST = 'task.list';
export const TASK_MESSAGE = 'task.message';
export const TASK_MOVE = 'task.move';
export const TASK_RELATED = 'task.related';
export const TASK_REPOSITORY_ADD = 'task.repository.add';
export const TASK_REPOSITORY_SET_BASE_BRANCH = 'task.repository.set_base_branch';
export const TASK_SET_STATE = 'task.set_state';
export const TASK_SET_TITLE = 'task.set_title';
export const TASK_STOP = 'task.stop';
export const TASK_UPDATE = 'task.update';
export const UNSUBSCRIBE = 'unsubscribe';
export const UPSTREAM_CONFIG = 'upstream.config';
export const UPSTREAM_LIST = 'upstream.list';
export const UPSTREAM_REFUSED = 'upstream.refused';
export const UPSTREAM_REPORT = 'upstream.report';
export const WORKFLOW_CREATE = 'workflow.create';
export const WORKFLOW_DELETE = 'workflow.delete';
export const WORKFLOW_EXPORT = 'workflow.export';
export const WORKFLOW_GET = 'workflow.get';
export const WORKFLOW_IMPORT = 'workflow.import';
export const WORKFLOW_LIST = 'workflow.list';
export const WORKFLOW_STEP_CREATE = 'workflow.step.create';
export const WORKFLOW_STEP_DELETE = 'workflow.step.delete';
export const WORKFLOW_STEP_GET = 'workflow.step.get';
export const WORKFLOW_STEP_LIST = 'workflow.step.list';
export const WORKFLOW_STEP_REORDER = 'workflow.step.reorder';
export const WORKFLOW_STEP_UPDATE = 'workflow.step.update';
export const WORKFLOW_TEMPLATE_LIST = 'workflow.template.list';
export const WORKFLOW_UPDATE = 'workflow.update';
export const WORKSPACE_CREATE = 'workspace.create';
export const WORKSPACE_GET = 'workspace.get';
export const WORKSPACE_LIST = 'workspace.list';
export const WORKSPACE_SOURCE_ADD = 'workspace.source.add';
export const WORKSPACE_UPDATE = 'workspace.update';

// Events.
export const ARTIFACT_CREATED = 'artifact.created';
export const ARTIFACT_DELETED = 'artifact.deleted';
export const DOCUMENT_UPDATED = 'document.updated';
export const PERMISSION_REQUESTED = 'permission.requested';
export const PERMISSION_RESOLVED = 'permission.resolved';
export const PLAN_DELETED = 'plan.deleted';
export const PLAN_UPDATED = 'plan.updated';
export const QUESTION_ANSWERED = 'question.answered';
export const QUESTION_CREATED = 'question.created';
export const REPOSITORY_CREATED = 'repository.created';
export const REPOSITORY_UPDATED = 'repository.updated';
export const SESSION_CREATED = 'session.created';
export const SESSION_MESSAGE = 'session.message';
export const SESSION_MODE_CHANGED = 'session.mode_changed';
export const SESSION_STOPPED = 'session.stopped';
export const SESSION_UPDATED = 'session.updated';
export const SESSION_UPSTREAMS_CHANGED = 'session.upstreams_changed';
export const TASK_CREATED = 'task.created';
export const TASK_DELETED = 'task.deleted';
export const TASK_DEPENDENCY_ADDED = 'task.dependency_added';
export const TASK_MOVED = 'task.moved';
export const TASK_REPOSITORY_UPDATED = 'task.repository_updated';
export const TASK_UPDATED = 'task.updated';
export const WORKFLOW_CREATED = 'workflow.created';
export const WORKFLOW_DELETED = 'workflow.deleted';
export const WORKFLOW_STEP_CREATED = 'workflow.step_created';
export const WORKFLOW_STEP_DELETED = 'workflow.step_deleted';
export const WORKFLOW_STEP_UPDATED = 'workflow.step_updated';
export const WORKFLOW_STEPS_REORDERED = 'workflow.steps_reordered';
export const WORKFLOW_UPDATED = 'workflow.updated';

// Bounds and enums.
export const MAX_TITLE_LEN = 60; // a task's title, in characters
export const MAX_LIMIT = 200; // items of one page of a list
export const SESSION_MODES = Object.freeze(['task', 'task-title-pending', 'config', 'office']); // the modes a session may be put in
