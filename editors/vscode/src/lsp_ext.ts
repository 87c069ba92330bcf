// The contextls requests and notifications as typed LSP messages. Method names and types come
// from the generated protocol (src/generated/protocol.ts, from the server's schema): a method
// the schema does not have, or a changed params/result type, fails the typecheck.
import { NotificationType, RequestType } from 'vscode-languageclient';
import type { Methods, Notifications } from './generated/protocol';

export type Params<M extends keyof Methods> = Methods[M]['params'];
export type Result<M extends keyof Methods> = Methods[M]['result'];

function request<M extends keyof Methods>(method: M): RequestType<Params<M>, Result<M>, void> {
  return new RequestType<Params<M>, Result<M>, void>(method);
}
function notification<M extends keyof Notifications>(method: M): NotificationType<Notifications[M]> {
  return new NotificationType<Notifications[M]>(method);
}

export const addRegion = request('contextls/addRegion');
export const addFile = request('contextls/addFile');
export const addFiles = request('contextls/addFiles');
export const addSymbol = request('contextls/addSymbol');
export const addText = request('contextls/addText');
export const remove = request('contextls/remove');
export const pin = request('contextls/pin');
export const clear = request('contextls/clear');
export const list = request('contextls/list');
export const render = request('contextls/render');
export const status = request('contextls/status');
export const search = request('contextls/search');
export const restore = request('contextls/restore');
export const refresh = request('contextls/refresh');
export const forget = request('contextls/forget');
export const configure = request('contextls/configure');
export const serverInfo = request('contextls/serverInfo');
export const symbolAt = request('contextls/symbolAt');
export const addSymbolByName = request('contextls/addSymbolByName');
export const setView = request('contextls/setView');
export const addMap = request('contextls/addMap');

export const didChangeStatus = notification('contextls/didChangeStatus');
export const didEvict = notification('contextls/didEvict');
export const didWarn = notification('contextls/didWarn');
