// "Try it out" in /docs: a fresh x-message-id on every request, and in the sandbox the demo
// credentials already entered under Authorize. Loaded by the docs page before Swagger UI starts.
(function () {
  'use strict';
  // The documented example id: replaced on each request so that no two requests share one.
  var EXAMPLE_ID = 'kVuV69kGTS25FUs1wrkECQ';

  /** 22 URL-safe base64 characters: a random UUID's 16 bytes, unpadded (DESIGN A.2). */
  function newMessageId() {
    var bytes = crypto.getRandomValues(new Uint8Array(16));
    return btoa(String.fromCharCode.apply(null, Array.from(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  window.applianceCloudDocs = {
    /** Swagger UI's requestInterceptor: the example (or a missing) id becomes a fresh one; a typed one is kept. */
    freshMessageId: function (request) {
      var headers = request.headers || (request.headers = {});
      if ('x-message-id' in headers && (headers['x-message-id'] === EXAMPLE_ID || headers['x-message-id'] === '')) {
        headers['x-message-id'] = newMessageId();
      }
      return request;
    },
    /** Swagger UI's onComplete: the sandbox's credentials (none elsewhere) entered under Authorize. */
    preauthorize: function (ui) {
      // Beside the page, as Swagger UI resolves its own files: /docs and /docs/ both lead to /docs/try-it-out.json.
      var page = window.location.href.split('#')[0];
      var url = (page.endsWith('/') ? page : page + '/') + 'try-it-out.json';
      fetch(url, { headers: { accept: 'application/json' } })
        .then(function (response) { return response.ok ? response.json() : {}; })
        .then(function (preset) {
          if (preset.accessToken) ui.preauthorizeApiKey('accessToken', preset.accessToken);
          if (preset.serviceId) ui.preauthorizeApiKey('serviceId', preset.serviceId);
          if (preset.serviceKey) ui.preauthorizeApiKey('serviceKey', preset.serviceKey);
        });
    },
  };
})();
