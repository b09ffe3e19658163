// Calls to the server: JSON requests, uploads with progress, NDJSON streams.
// The API is at the page's own origin, inside the /w/NAME/ prefix when the page is.

const CREDENTIAL = 'kgrag.credential';

/** The path before /webui/: '' for the default workspace, '/w/NAME' for another. */
export const base = location.pathname.replace(/\/webui(\/.*)?$/, '');

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail ? `${status}: ${detail}` : `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
  }
}

/** The key or token, kept for this browser tab only (sessionStorage). */
export const credential = {
  get: () => sessionStorage.getItem(CREDENTIAL) || '',
  set: (value) => sessionStorage.setItem(CREDENTIAL, value),
  clear: () => sessionStorage.removeItem(CREDENTIAL),
};

let unauthorized = () => {};

/** What to do when the server answers 401 (ask for credentials again). */
export function whenUnauthorized(handler) {
  unauthorized = handler;
}

function headers(json) {
  const out = json ? { 'Content-Type': 'application/json' } : {};
  const given = credential.get();
  if (given) out.Authorization = `Bearer ${given}`;
  return out;
}

function url(path, params) {
  const query = params ? `?${new URLSearchParams(params)}` : '';
  return `${base}${path}${query}`;
}

/** A JSON call; resolves to the parsed body, rejects with ApiError. */
export async function call(method, path, { body, params, signal } = {}) {
  const init = { method, headers: headers(body !== undefined), signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  return parse(await fetch(url(path, params), init));
}

async function parse(response) {
  const text = await response.text();
  const data = readJson(text);
  if (!response.ok) {
    if (response.status === 401) unauthorized();
    throw new ApiError(response.status, detailOf(data));
  }
  return data;
}

function readJson(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

function detailOf(data) {
  const detail = data && typeof data === 'object' ? data.detail : data;
  if (Array.isArray(detail)) return detail.map((d) => d.msg || JSON.stringify(d)).join('; ');
  return typeof detail === 'string' ? detail : '';
}

/** POST files as multipart field 'file' with XMLHttpRequest, reporting upload progress (0..1). */
export function upload(path, files, onProgress) {
  const form = new FormData();
  for (const file of files) form.append('file', file, file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url(path));
    for (const [name, value] of Object.entries(headers(false))) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener('load', () => {
      const data = readJson(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) return resolve(data);
      if (xhr.status === 401) unauthorized();
      return reject(new ApiError(xhr.status, detailOf(data)));
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'network error')));
    xhr.send(form);
  });
}

/** POST a JSON body and yield each NDJSON line of the answer as it arrives. */
export async function* ndjson(path, body, signal) {
  const response = await fetch(url(path), {
    method: 'POST', headers: headers(true), body: JSON.stringify(body), signal,
  });
  if (!response.ok) await parse(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    const lines = buffer.split('\n');
    buffer = done ? '' : lines.pop();
    for (const line of lines) if (line.trim()) yield JSON.parse(line);
    if (done) return;
  }
}

/** Await a background job, calling onUpdate with each state seen; resolves to the ended job. */
export async function watchJob(jobId, onUpdate = () => {}) {
  for (;;) {
    const job = await call('GET', `/jobs/${encodeURIComponent(jobId)}`, { params: { wait: 1 } });
    onUpdate(job);
    if (!['queued', 'running'].includes(job.status)) return job;
  }
}
