// amt-local's page: building DOM from values. Every value goes in as text (a text node or an
// attribute), never as HTML. Shared by app.js (the views) and charts.js (the charts), and by
// bench/web (the render benchmark), which loads them without the API.
"use strict";

// An element with attributes and children; strings become text nodes.
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function link(href, text) {
  return el("a", {href}, text);
}

function statusCell(status) {
  return el("td", {class: "status-" + status}, status || "");
}

function time(value) {
  if (value === undefined || value === null) return "";
  const date = new Date(typeof value === "number" ? value * 1000 : value);
  return isNaN(date) ? String(value) : date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function number(value) {
  if (value === undefined || value === null || value === "") return "";
  const n = Number(value);
  return Number.isFinite(n) ? String(Math.round(n * 1e6) / 1e6) : String(value);
}

// A table: `columns` are [heading, (row) => cell content or <td>], `rows` the data.
function table(caption, columns, rows, empty) {
  if (rows.length === 0) return el("p", {}, empty || "None.");
  return el(
      "table", {},
      el("caption", {}, caption),
      el("thead", {}, el("tr", {}, columns.map(([heading]) => el("th", {scope: "col"}, heading)))),
      el("tbody", {}, rows.map((row) => el("tr", {}, columns.map(([, cell]) => {
        const content = cell(row);
        return content instanceof HTMLTableCellElement ? content : el("td", {}, content);
      })))));
}

function definitions(pairs) {
  return el("dl", {}, pairs.filter(([, value]) => value !== undefined && value !== "")
                           .map(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
}
