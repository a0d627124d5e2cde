// Renders the pages' math (\( \) and \[ \] from pymdownx.arithmatex) with the site's own KaTeX,
// on the first load and after each of Material's instant page changes.
document$.subscribe(({ body }) => {
  renderMathInElement(body, {
    delimiters: [
      { left: '\\(', right: '\\)', display: false },
      { left: '\\[', right: '\\]', display: true },
    ],
    throwOnError: false,
  });
});
