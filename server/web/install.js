// Makes the page installable and keeps an offline page: registers the service worker (sw.js,
// served at /sw.js so that it controls every page of the site). Browsers allow a service worker
// only in a secure context (https, or localhost); elsewhere (plain http on a Wi-Fi address) this
// does nothing and the page works exactly as without it.
//
// The worker is registered once the page has loaded, so that the files it keeps never compete
// with the page's own first load.

/** Registers the service worker, if this browser and this address allow one. */
export function registerWorker() {
  if (!window.isSecureContext || !("serviceWorker" in navigator)) return;
  const register = () => {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {
      // A worker that cannot be registered (a private window, a full disk) changes nothing:
      // the page works as it would without one.
    });
  };
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}

registerWorker();
