// The app's service worker, written into ../static/web/sw.js by build.mjs with the bundle's files and a
// version made from their contents, and served at /sw.js (apps.web.views) so that it covers the app.
// It keeps the shell page and the bundle, so the app starts without a connection; the API is never
// cached here (reviews made offline wait in IndexedDB, see src/offline/).
const VERSION = "140902705b824f9f";
const ASSETS = ["/static/web/app.js","/static/web/app.css","/static/web/theme.js","/static/web/favicon.svg","/static/web/chunks/CardBrowser-CHQYEQI7.js","/static/web/chunks/CardHistory-K6ST3L57.js","/static/web/chunks/Constellation-PZQEDWIC.js","/static/web/chunks/DeckStudy-XUCQ6DWV.js","/static/web/chunks/Exercise-BBQ3LJC2.js","/static/web/chunks/Explorer-F5CMV7SS.js","/static/web/chunks/Lesson-EVGGDKUK.js","/static/web/chunks/Match-TNKDUKJJ.js","/static/web/chunks/Progress-ALRU72TZ.js","/static/web/chunks/Quiz-WJECZQWG.js","/static/web/chunks/QuizAttempt-PUL46DVK.js","/static/web/chunks/Settings-RSBEPNKX.js","/static/web/chunks/StudyOverview-I746WBG2.js","/static/web/chunks/chunk-3UPUHRG2.js","/static/web/chunks/chunk-473QTJFK.js","/static/web/chunks/chunk-4FSO7V2V.js","/static/web/chunks/chunk-53TQN65N.js","/static/web/chunks/chunk-DEATSKZC.js","/static/web/chunks/chunk-DPAXY2V5.js","/static/web/chunks/chunk-EJVU3JL4.js","/static/web/chunks/chunk-KMRVZLYL.js","/static/web/chunks/chunk-KVWGMGRK.js","/static/web/chunks/chunk-KXJWQBFC.js","/static/web/chunks/chunk-LJ7GEKKK.js","/static/web/chunks/chunk-LMEZTFCF.js","/static/web/chunks/chunk-NV25DARG.js","/static/web/chunks/chunk-QIKPODKX.js","/static/web/chunks/chunk-RBGQFV24.js","/static/web/chunks/chunk-TKFUBZF2.js","/static/web/chunks/chunk-YZDOATKD.js","/static/web/chunks/editor-ZR4KHBJO.js","/static/web/chunks/explorer-6VWRPNCJ.js","/static/web/chunks/sync-MOXXP2DV.js"];
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
