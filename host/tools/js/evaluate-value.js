// The value `evaluate` returned, as bounded JSON: what JSON cannot hold (a cycle, a
// DOM node, a function, undefined, a Map) is described in a string, never thrown.
function(limits) {
  const {depth: maxDepth, items: maxItems, string: maxString, nodes: maxNodes} = limits;
  const ancestors = new Set();
  let left = maxNodes;
  const cut = (s) => (s.length > maxString ? `${s.slice(0, maxString)}… (${s.length} characters)` : s);
  const node = (v) => {
    if (v.nodeType === 1) {
      const id = v.id ? `#${v.id}` : '';
      const cls = typeof v.className === 'string' && v.className.trim()
        ? `.${v.className.trim().split(/\s+/).slice(0, 3).join('.')}` : '';
      const text = String(v.textContent || '').replace(/\s+/g, ' ').trim();
      return cut(`[element <${v.localName}${id}${cls}>${text ? ` "${text.slice(0, 80)}"` : ''}]`);
    }
    if (v.nodeType === 3) return cut(`[text node "${String(v.data).slice(0, 80)}"]`);
    if (v.nodeType === 9) return `[document ${String(v.URL || '').slice(0, 200)}]`;
    return `[node ${v.nodeName}]`;
  };
  const walk = (v, depth) => {
    const type = typeof v;
    if (v === null || type === 'boolean') return v;
    if (type === 'number') return Number.isFinite(v) ? v : String(v);
    if (type === 'string') return cut(v);
    if (type === 'undefined') return '[undefined]';
    if (type === 'bigint') return `${v}n`;
    if (type === 'symbol') return cut(String(v));
    if (type === 'function') return `[function ${v.name || 'anonymous'}]`;
    if (ancestors.has(v)) return '[cycle]';
    if (typeof v.nodeType === 'number' && typeof v.nodeName === 'string') return node(v);
    if (v === v.window) return `[window ${String(v.location && v.location.href).slice(0, 200)}]`;
    if (v instanceof Error) return cut(`[${v.name}: ${v.message}]`);
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? '[invalid date]' : v.toISOString();
    if (v instanceof RegExp) return cut(String(v));
    if (v instanceof Promise) return '[promise]';
    if (--left < 0) return '[…]';
    let entries;
    let array = false;
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      array = true;
      entries = Array.from({length: Math.min(v.length, maxItems)}, (_, i) => [i, () => v[i]]);
    } else if (v instanceof Map) {
      entries = [...v].slice(0, maxItems).map(([k, x]) => [typeof k === 'string' ? k : String(k), () => x]);
    } else if (v instanceof Set) {
      array = true;
      entries = [...v].slice(0, maxItems).map((x, i) => [i, () => x]);
    } else {
      entries = Object.keys(v).slice(0, maxItems).map((k) => [k, () => v[k]]);
    }
    const size = array ? (v.length ?? v.size) : (v instanceof Map ? v.size : Object.keys(v).length);
    if (depth >= maxDepth) return array ? `[array of ${size}]` : `[object of ${size} keys]`;
    ancestors.add(v);
    const out = array ? [] : {};
    for (const [key, read] of entries) {
      let item;
      try {
        item = walk(read(), depth + 1);
      } catch (e) {
        item = cut(`[reading it threw ${e && e.name ? `${e.name}: ${e.message}` : String(e)}]`);
      }
      if (array) out.push(item); else out[key] = item;
    }
    ancestors.delete(v);
    if (size > entries.length) {
      const more = `[… ${size - entries.length} more]`;
      if (array) out.push(more); else out['…'] = more;
    }
    return out;
  };
  return walk(this, 0);
}
