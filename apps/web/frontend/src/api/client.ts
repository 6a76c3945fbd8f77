/** The typed API client: the token on every request, and every failure as an exception. */
import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "./schema";
import { ApiProblem, NetworkProblem } from "./errors";

export const TOKEN_KEY = "quizsite.token";

export function readToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function writeToken(token: string | null): void {
  try {
    if (token === null) localStorage.removeItem(TOKEN_KEY);
    else localStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (private mode quotas): the session lasts until reload.
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when the server says the token is not (or no longer) valid. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = readToken();
    if (token !== null) request.headers.set("Authorization", `Token ${token}`);
    return request;
  },
  onResponse({ response, request }) {
    const hadToken = request.headers.has("Authorization");
    if (response.status === 401 && hadToken) {
      for (const listener of unauthorizedListeners) listener();
    }
    return response;
  },
};

export const client = createClient<paths>({ baseUrl: "" });
client.use(auth);

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Awaits an openapi-fetch call and gives its data, or throws ApiProblem / NetworkProblem. */
export async function call<T>(request: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await request;
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    throw new NetworkProblem(cause);
  }
  const { response } = result;
  if (!response.ok) {
    throw new ApiProblem(response.status, result.error, response.headers.get("Retry-After"));
  }
  return result.data as T;
}
