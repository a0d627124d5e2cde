// Start Swagger UI on /docs with this server's OpenAPI document (a file, not an inline
// script, so the page's Content-Security-Policy can forbid inline scripts).
window.ui = window.SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: true,
  validatorUrl: null, // no request to an outside validator
  showExtensions: true,
  showCommonExtensions: true,
  presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIBundle.SwaggerUIStandalonePreset],
});
