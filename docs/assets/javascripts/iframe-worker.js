/*
 * numaspec's site, opened from disk: the theme runs its search in a Web Worker, and browsers
 * refuse a worker whose script is a file:// URL.  On file:// only, this replaces Worker with
 * one that runs the same script in a hidden frame of the page, speaking the same interface
 * (postMessage one way, "message" events the other).  Served over http(s) it does nothing.
 * Loaded by mkdocs.yml's extra.polyfills, before the theme's own script.
 */
(function () {
  "use strict";
  if (location.protocol !== "file:" || typeof document === "undefined") {
    return;
  }

  function FrameWorker(url) {
    var target = document.createDocumentFragment();
    var self = this;
    var queue = [];
    var ready = false;
    var frame = document.createElement("iframe");
    this.onmessage = null;
    this.onerror = null;
    this.addEventListener = target.addEventListener.bind(target);
    this.removeEventListener = target.removeEventListener.bind(target);
    this.dispatchEvent = target.dispatchEvent.bind(target);

    function deliver(data) {
      var event = new MessageEvent("message", { data: data });
      if (typeof self.onmessage === "function") {
        self.onmessage(event);
      }
      target.dispatchEvent(event);
    }

    function send(data) {
      frame.contentWindow.dispatchEvent(new MessageEvent("message", { data: data }));
    }

    this.postMessage = function (data) {
      if (ready) {
        setTimeout(function () { send(data); }, 0);
      } else {
        queue.push(data);
      }
    };
    this.terminate = function () {
      if (frame.parentNode) {
        frame.parentNode.removeChild(frame);
      }
    };

    frame.hidden = true;
    frame.setAttribute("aria-hidden", "true");
    frame.setAttribute("tabindex", "-1");
    (document.body || document.documentElement).appendChild(frame);
    var scope = frame.contentWindow;
    // the worker's script answers with the global postMessage: here, back to the page
    scope.postMessage = function (data) {
      setTimeout(function () { deliver(data); }, 0);
    };
    scope.importScripts = function () {
      throw new Error("importScripts is not available when the site is opened from disk");
    };
    var script = scope.document.createElement("script");
    script.src = new URL(url, location.href).href;
    script.onload = function () {
      ready = true;
      queue.splice(0).forEach(function (data) { send(data); });
    };
    script.onerror = function () {
      var event = new ErrorEvent("error", { message: "cannot load " + script.src });
      if (typeof self.onerror === "function") {
        self.onerror(event);
      }
      target.dispatchEvent(event);
    };
    scope.document.head.appendChild(script);
  }

  window.Worker = FrameWorker;
})();
