package kanban

// Action names one backend action: a dotted noun.verb name that the action
// registry serves on every transport (WebSocket, MCP tools, CLI). Each name
// is written once, as one of the constants below; the registry, the tool
// catalog, the CLI and the tests refer to the constant, so two spellings of
// one action cannot drift apart.
type Action string

// The actions the action registry serves (see RegistryActions).
const (
	ActionAgentDetect                 Action = "agent.detect"
	ActionAgentList                   Action = "agent.list"
	ActionAgentProfileCreate          Action = "agent.profile.create"
	ActionAgentProfileDelete          Action = "agent.profile.delete"
	ActionAgentProfileList            Action = "agent.profile.list"
	ActionAgentProfileUpdate          Action = "agent.profile.update"
	ActionAgentUpdate                 Action = "agent.update"
	ActionArtifactCreate              Action = "artifact.create"
	ActionArtifactDelete              Action = "artifact.delete"
	ActionArtifactLatest              Action = "artifact.latest"
	ActionArtifactList                Action = "artifact.list"
	ActionAuditList                   Action = "audit.list"
	ActionApprovalList                Action = "approval.list"
	ActionDiagnosticBundleCreate      Action = "diagnostic_bundle.create"
	ActionDocumentGet                 Action = "document.get"
	ActionDocumentList                Action = "document.list"
	ActionDocumentWrite               Action = "document.write"
	ActionExecutorList                Action = "executor.list"
	ActionExecutorProfileCreate       Action = "executor.profile.create"
	ActionExecutorProfileDelete       Action = "executor.profile.delete"
	ActionExecutorProfileList         Action = "executor.profile.list"
	ActionExecutorProfileUpdate       Action = "executor.profile.update"
	ActionMCPConfigGet                Action = "mcp_config.get"
	ActionMCPConfigUpdate             Action = "mcp_config.update"
	ActionMessageList                 Action = "message.list"
	ActionNotificationChannelCreate   Action = "notification.channel.create"
	ActionNotificationChannelDelete   Action = "notification.channel.delete"
	ActionNotificationChannelList     Action = "notification.channel.list"
	ActionNotificationChannelUpdate   Action = "notification.channel.update"
	ActionNotificationDeliveryList    Action = "notification.delivery.list"
	ActionNotificationList            Action = "notification.list"
	ActionNotificationMarkRead        Action = "notification.mark_read"
	ActionNotificationSettingsGet     Action = "notification.settings.get"
	ActionNotificationSettingsSet     Action = "notification.settings.set"
	ActionPermissionList              Action = "permission.list"
	ActionPermissionResolve           Action = "permission.resolve"
	ActionPlanCreate                  Action = "plan.create"
	ActionPlanDelete                  Action = "plan.delete"
	ActionPlanGet                     Action = "plan.get"
	ActionPlanRevisions               Action = "plan.revisions"
	ActionPlanUpdate                  Action = "plan.update"
	ActionQuestionAnswer              Action = "question.answer"
	ActionQuestionAsk                 Action = "question.ask"
	ActionQuestionAskParent           Action = "question.ask_parent"
	ActionQuestionGet                 Action = "question.get"
	ActionQuestionList                Action = "question.list"
	ActionRepositoryCreate            Action = "repository.create"
	ActionRepositoryList              Action = "repository.list"
	ActionRepositoryUpdate            Action = "repository.update"
	ActionReviewCommentCreate         Action = "review.comment.create"
	ActionReviewCommentDelete         Action = "review.comment.delete"
	ActionReviewCommentList           Action = "review.comment.list"
	ActionReviewCommentUpdate         Action = "review.comment.update"
	ActionBudgetGet                   Action = "budget.get"
	ActionBudgetList                  Action = "budget.list"
	ActionBudgetSet                   Action = "budget.set"
	ActionRoutineCreate               Action = "routine.create"
	ActionRoutineDelete               Action = "routine.delete"
	ActionRoutineGet                  Action = "routine.get"
	ActionRoutineList                 Action = "routine.list"
	ActionRoutineRuns                 Action = "routine.runs"
	ActionRoutineUpdate               Action = "routine.update"
	ActionSecretDelete                Action = "secret.delete"
	ActionSecretList                  Action = "secret.list"
	ActionSecretSet                   Action = "secret.set"
	ActionReviewSend                  Action = "review.send"
	ActionSessionAttach               Action = "session.attach"
	ActionSessionCreate               Action = "session.create"
	ActionSessionGet                  Action = "session.get"
	ActionSessionList                 Action = "session.list"
	ActionSessionProfile              Action = "session.profile"
	ActionSessionReportCalls          Action = "session.report_calls"
	ActionSessionSetMode              Action = "session.set_mode"
	ActionSessionSpawn                Action = "session.spawn"
	ActionSessionStop                 Action = "session.stop"
	ActionSessionToken                Action = "session.token"
	ActionSessionUsage                Action = "session.usage"
	ActionStepComplete                Action = "step.complete"
	ActionStepDecide                  Action = "step.decide"
	ActionTaskArchive                 Action = "task.archive"
	ActionTaskChangesCommits          Action = "task.changes.commits"
	ActionTaskChangesDiff             Action = "task.changes.diff"
	ActionTaskChangesList             Action = "task.changes.list"
	ActionTaskChangesSummary          Action = "task.changes.summary"
	ActionTaskCommit                  Action = "task.commit"
	ActionTaskCreate                  Action = "task.create"
	ActionTaskDelete                  Action = "task.delete"
	ActionTaskDependencyAdd           Action = "task.dependency.add"
	ActionTaskDependencyList          Action = "task.dependency.list"
	ActionTaskDependencyRemove        Action = "task.dependency.remove"
	ActionTaskFilesList               Action = "task.files.list"
	ActionTaskFilesRead               Action = "task.files.read"
	ActionTaskGet                     Action = "task.get"
	ActionTaskList                    Action = "task.list"
	ActionTaskMessage                 Action = "task.message"
	ActionTaskMove                    Action = "task.move"
	ActionTaskMRAutomationGet         Action = "task.mr_automation.get"
	ActionTaskMRAutomationUpdate      Action = "task.mr_automation.update"
	ActionTaskPRAutomationGet         Action = "task.pr_automation.get"
	ActionTaskPRAutomationUpdate      Action = "task.pr_automation.update"
	ActionTaskPRBadges                Action = "task.pr.badges"
	ActionTaskPRGet                   Action = "task.pr.get"
	ActionTaskPRList                  Action = "task.pr.list"
	ActionTaskPRMerge                 Action = "task.pr.merge"
	ActionTaskPROpen                  Action = "task.pr.open"
	ActionTaskPush                    Action = "task.push"
	ActionTaskRelated                 Action = "task.related"
	ActionTaskRepositoryAdd           Action = "task.repository.add"
	ActionTaskRepositorySetBaseBranch Action = "task.repository.set_base_branch"
	ActionTaskSetState                Action = "task.set_state"
	ActionTaskSetTitle                Action = "task.set_title"
	ActionTaskStop                    Action = "task.stop"
	ActionTaskUnarchive               Action = "task.unarchive"
	ActionTaskUpdate                  Action = "task.update"
	ActionTaskUsage                   Action = "task.usage"
	ActionUpstreamConfig              Action = "upstream.config"
	ActionUpstreamList                Action = "upstream.list"
	ActionUpstreamRefused             Action = "upstream.refused"
	ActionUpstreamReport              Action = "upstream.report"
	ActionWorkflowCreate              Action = "workflow.create"
	ActionWorkflowDelete              Action = "workflow.delete"
	ActionWorkflowExport              Action = "workflow.export"
	ActionWorkflowGet                 Action = "workflow.get"
	ActionWorkflowImport              Action = "workflow.import"
	ActionTaskCommentAdd              Action = "task.comment.add"
	ActionTaskCommentList             Action = "task.comment.list"
	ActionWorkflowList                Action = "workflow.list"
	ActionWorkflowStepCreate          Action = "workflow.step.create"
	ActionWorkflowStepDelete          Action = "workflow.step.delete"
	ActionWorkflowStepGet             Action = "workflow.step.get"
	ActionWorkflowStepList            Action = "workflow.step.list"
	ActionWorkflowStepReorder         Action = "workflow.step.reorder"
	ActionWorkflowStepUpdate          Action = "workflow.step.update"
	ActionWorkflowTemplateList        Action = "workflow.template.list"
	ActionWorkflowUpdate              Action = "workflow.update"
	ActionWorkspaceCreate             Action = "workspace.create"
	ActionWorkspaceGet                Action = "workspace.get"
	ActionWorkspaceList               Action = "workspace.list"
	ActionWorkspaceSourceAdd          Action = "workspace.source.add"
	ActionWorkspaceUpdate             Action = "workspace.update"
	ActionWorkspaceUsage              Action = "workspace.usage"
)

// The connection actions the WebSocket server answers itself: they change
// which notifications a connection receives and reach no handler.
const (
	ActionSubscribe   Action = "subscribe"
	ActionUnsubscribe Action = "unsubscribe"
)

// RegistryActions lists every action the action registry registers, once
// each (a test checks the registry serves exactly these).
var RegistryActions = []Action{
	ActionAgentDetect, ActionAgentList, ActionAgentProfileCreate, ActionAgentProfileDelete, ActionAgentProfileList, ActionAgentProfileUpdate, ActionAgentUpdate,
	ActionArtifactCreate, ActionArtifactDelete, ActionArtifactLatest, ActionArtifactList,
	ActionApprovalList,
	ActionAuditList,
	ActionBudgetGet, ActionBudgetList, ActionBudgetSet,
	ActionDiagnosticBundleCreate,
	ActionDocumentGet, ActionDocumentList, ActionDocumentWrite,
	ActionExecutorList, ActionExecutorProfileCreate, ActionExecutorProfileDelete, ActionExecutorProfileList, ActionExecutorProfileUpdate,
	ActionMCPConfigGet, ActionMCPConfigUpdate,
	ActionMessageList,
	ActionNotificationChannelCreate, ActionNotificationChannelDelete, ActionNotificationChannelList, ActionNotificationChannelUpdate,
	ActionNotificationDeliveryList, ActionNotificationList, ActionNotificationMarkRead, ActionNotificationSettingsGet, ActionNotificationSettingsSet,
	ActionPermissionList, ActionPermissionResolve,
	ActionPlanCreate, ActionPlanDelete, ActionPlanGet, ActionPlanRevisions, ActionPlanUpdate,
	ActionQuestionAnswer, ActionQuestionAsk, ActionQuestionAskParent, ActionQuestionGet, ActionQuestionList,
	ActionRepositoryCreate, ActionRepositoryList, ActionRepositoryUpdate,
	ActionReviewCommentCreate, ActionReviewCommentDelete, ActionReviewCommentList, ActionReviewCommentUpdate, ActionReviewSend,
	ActionRoutineCreate, ActionRoutineDelete, ActionRoutineGet, ActionRoutineList, ActionRoutineRuns, ActionRoutineUpdate,
	ActionSecretDelete, ActionSecretList, ActionSecretSet,
	ActionSessionAttach, ActionSessionCreate, ActionSessionGet, ActionSessionList, ActionSessionProfile, ActionSessionReportCalls, ActionSessionSetMode, ActionSessionSpawn, ActionSessionStop, ActionSessionToken, ActionSessionUsage,
	ActionStepComplete, ActionStepDecide,
	ActionTaskArchive, ActionTaskChangesCommits, ActionTaskChangesDiff, ActionTaskChangesList, ActionTaskChangesSummary, ActionTaskCommentAdd, ActionTaskCommentList, ActionTaskCommit, ActionTaskCreate, ActionTaskDelete, ActionTaskDependencyAdd, ActionTaskDependencyList, ActionTaskDependencyRemove, ActionTaskFilesList, ActionTaskFilesRead, ActionTaskGet, ActionTaskList, ActionTaskMRAutomationGet, ActionTaskMRAutomationUpdate, ActionTaskMessage, ActionTaskMove, ActionTaskPRAutomationGet, ActionTaskPRAutomationUpdate, ActionTaskPRBadges, ActionTaskPRGet, ActionTaskPRList, ActionTaskPRMerge, ActionTaskPROpen, ActionTaskPush, ActionTaskRelated, ActionTaskRepositoryAdd, ActionTaskRepositorySetBaseBranch, ActionTaskSetState, ActionTaskSetTitle, ActionTaskStop, ActionTaskUnarchive, ActionTaskUpdate, ActionTaskUsage,
	ActionUpstreamConfig, ActionUpstreamList, ActionUpstreamRefused, ActionUpstreamReport,
	ActionWorkflowCreate, ActionWorkflowDelete, ActionWorkflowExport, ActionWorkflowGet, ActionWorkflowImport, ActionWorkflowList, ActionWorkflowStepCreate, ActionWorkflowStepDelete, ActionWorkflowStepGet, ActionWorkflowStepList, ActionWorkflowStepReorder, ActionWorkflowStepUpdate, ActionWorkflowTemplateList, ActionWorkflowUpdate,
	ActionWorkspaceCreate, ActionWorkspaceGet, ActionWorkspaceList, ActionWorkspaceSourceAdd, ActionWorkspaceUpdate, ActionWorkspaceUsage,
}

// ConnectionActions lists the connection actions.
var ConnectionActions = []Action{ActionSubscribe, ActionUnsubscribe}
