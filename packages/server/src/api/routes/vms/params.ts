import { Type } from 'typebox';

export const VmIdParams = Type.Object({ vm_id: Type.String({ minLength: 1, maxLength: 64 }) });
