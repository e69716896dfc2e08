/** The VM service (vm-service.ts) and the words its users need: the one door to core/vms/. */
export { VmService, type Admission } from './vm-service.ts';
export { pythonContextOf, type LiveVm, type PreStopRunner, type VmNetworkHook, type VmReadyHook, type VmSpec } from './types.ts';
export { applySessionEnv, trustVaultCa, VM_READY_ORDER, type VmReadiness, type VmReadySteps } from './readiness.ts';
export type { ResolvedVm, SessionWithVm, VmState } from './resolve.ts';
export { newResumeNote, resumedMs, withResumeNote, type ResumeNote } from './resume-note.ts';
export { resumesOnTraffic } from './auto-pause.ts';
