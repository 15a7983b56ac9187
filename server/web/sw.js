// The service worker: an offline page instead of the browser's own error page, and nothing that
// could ever show an old app against a newer server.
//
// - A page (a navigation) is always asked of the network first; only when the network fails is
//   the offline page kept here shown instead (it says so and tries again by itself).
// - It keeps only the files of this version of the web client that the offline page needs, by
//   their versioned names (/assets/VERSION/...): a new binary has new names and a new sw.js (its
//   BUILD line differs), whose activation deletes the old version's files.
// - Everything else (/api/*, /ws, /r/CODE/qr.svg, /healthz, any other file) is left to the
//   browser and the network: never kept, never answered from here.
//
// The server writes the next line (server/src/web.rs): this version, the offline page's path and
// the files it keeps.
const BUILD = { version: "dev", offline: "/offline", keep: [] };

const CACHE = `dhumbal-${BUILD.version}`;

/**
 * Where the browser has static routes (Chromium's `addRoutes`), only a navigation wakes this
 * worker: a file under /assets/ comes from what it keeps, else the network (that is, the HTTP
 * cache, where a versioned file stays for good), and every other request goes to the network
 * without the worker's start-up in its way. Elsewhere the `fetch` handler below does the same.
 * @param {InstallEvent} event
 */
function addRoutes(event) {
  if (typeof event.addRoutes !== "function" || typeof URLPattern !== "function") return Promise.resolve();
  const route = (rule) => Promise.resolve().then(() => event.addRoutes(rule)).catch(() => {});
  return route({ condition: { urlPattern: new URLPattern({ pathname: "/assets/*" }) }, source: "cache" })
    .then(() => route({ condition: { not: { requestMode: "navigate" } }, source: "network" }))
    .then(() => route({ condition: { requestMode: "navigate" }, source: "race-network-and-fetch-handler" }));
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    Promise.all([addRoutes(event), caches.open(CACHE).then((cache) => cache.addAll(BUILD.keep))])
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(
          names
            .filter((name) => name.startsWith("dhumbal-") && name !== CACHE)
            .map((name) => caches.delete(name)),
        ),
      )
      // The page's request starts while the worker starts, not after.
      .then(() => self.registration.navigationPreload?.enable())
      .then(() => self.clients.claim()),
  );
});

/** The offline page, from this version's files. */
async function offlinePage() {
  const cache = await caches.open(CACHE);
  const page = await cache.match(BUILD.offline);
  return page || Response.error();
}

/** A file this version keeps, from here, or from the network while it is not kept yet. */
async function kept(request) {
  const cache = await caches.open(CACHE);
  return (await cache.match(request)) || fetch(request);
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith(
      Promise.resolve(event.preloadResponse)
        .then((preloaded) => preloaded || fetch(request))
        .catch(() => offlinePage()),
    );
  } else if (BUILD.keep.includes(url.pathname) && url.pathname !== BUILD.offline) {
    event.respondWith(kept(request));
  }
});
