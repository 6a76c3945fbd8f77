// The app's service worker, written into ../static/web/sw.js by build.mjs with the bundle's files and a
// version made from their contents, and served at /sw.js (apps.web.views) so that it covers the app.
// It keeps the shell page and the bundle, so the app starts without a connection; the API is never
// cached here (reviews made offline wait in IndexedDB, see src/offline/).
const VERSION = "__VERSION__";
const ASSETS = __ASSETS__;
const CACHE = `quizsite-shell-${VERSION}`;
// The shell is the same page at every route of the app; it is kept under one key.
const SHELL = "/";
// Navigations that are not the app's: the server answers them, or the browser says it is offline.
const NOT_THE_APP = ["/admin", "/api/", "/media/", "/static/", "/email/", "/healthz"];

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // "reload": past the HTTP cache, so a new version never keeps an old file.
      await cache.addAll([SHELL, ...ASSETS].map((url) => new Request(url, { cache: "reload" })));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key.startsWith("quizsite-shell-") && key !== CACHE) await caches.delete(key);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    if (NOT_THE_APP.some((prefix) => url.pathname.startsWith(prefix))) return;
    // The network first, so a deploy's page is seen at once; without one, the kept shell.
    event.respondWith(
      fetch(request).catch(async () => (await caches.match(SHELL, { cacheName: CACHE })) ?? Response.error()),
    );
    return;
  }
  if (ASSETS.includes(url.pathname)) {
    event.respondWith(caches.match(url.pathname, { cacheName: CACHE }).then((kept) => kept ?? fetch(request)));
  }
});
