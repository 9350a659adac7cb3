// Small DOM helpers.
//
// Series names and entity ids are data. They reach the page only through
// textContent, DOM properties and canvas text, never as HTML, so a name
// such as "<img src=x onerror=...>" shows as what it is.

export const byId = (id) => document.getElementById(id);

// el makes an element with a class and text content.
export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}
