// Request bodies for the two provider shapes, built from one provider-neutral
// conversation, and the usage each provider reports, read in full.
//
// Caching is why this module exists: both providers discount a prefix they have
// seen before, so a request must start with exactly the bytes of the previous one.
// The conversation is append-only (compaction, compact.js, is the one rewrite,
// and the prefix is stable again after it), every entry is rendered the same way
// each time, and Anthropic gets explicit `cache_control` breakpoints.

/**
 * One entry of the conversation.
 * @typedef {{role: "user", text: string}
 *   | {role: "assistant", text: string, toolCalls: ToolCall[], raw: object}
 *   | {role: "tool", results: ToolResult[]}} Entry
 * @typedef {{id: string, name: string, args: object}} ToolCall
 * @typedef {{id: string, content: string, isError: boolean, image?: Image}} ToolResult
 * @typedef {{mime: string, data: string, width: number, height: number}} Image
 *   a screenshot: base64 bytes of a JPEG or PNG
 * @typedef {{name: string, description: string, input_schema: object}} Tool
 * @typedef {{input: number, cacheRead: number, cacheWrite: number, output: number}} Usage
 *   `input` counts only the input tokens read neither from nor into the cache.
 */

/** Anthropic accepts at most this many cache breakpoints in one request. */
export const MAX_BREAKPOINTS = 4;

const EPHEMERAL = Object.freeze({ type: "ephemeral" });

/**
 * The Anthropic Messages body. Breakpoints: the last tool (the tool list is the
 * same for every task), the system prompt (the same for the whole conversation),
 * and the two newest tool-result messages: the newest writes the cache for the
 * next turn, the one before it is where this turn reads it.
 * @param {{model: string, maxTokens: number, system: string, tools: Tool[],
 *          history: Entry[]}} request
 * @returns {object}
 */
export function anthropicBody({ model, maxTokens, system, tools, history }) {
  const messages = anthropicMessages(history);
  const marked = [];
  for (let i = messages.length - 1; i >= 0 && marked.length < MAX_BREAKPOINTS - 2; i--) {
    const content = messages[i].content;
    if (messages[i].role === "user" && Array.isArray(content)
        && content.some((b) => b.type === "tool_result")) {
      marked.push(i);
    }
  }
  for (const i of marked) {
    const content = messages[i].content;
    content[content.length - 1] = { ...content[content.length - 1], cache_control: EPHEMERAL };
  }
  const toolList = tools.map(({ name, description, input_schema }) =>
    ({ name, description, input_schema }));
  if (toolList.length) {
    toolList[toolList.length - 1] = { ...toolList[toolList.length - 1], cache_control: EPHEMERAL };
  }
  return {
    model,
    max_tokens: maxTokens,
    system: [{ type: "text", text: system, cache_control: EPHEMERAL }],
    messages,
    // No tools (a connection test): no list, which some servers refuse when empty.
    ...(toolList.length ? { tools: toolList } : {}),
  };
}

/**
 * The conversation as Anthropic messages, without cache marks. A person's reply
 * right after tool results joins their user message, since roles must alternate.
 * @param {Entry[]} history
 */
export function anthropicMessages(history) {
  /** @type {{role: string, content: any}[]} */
  const messages = [];
  for (const entry of history) {
    const last = messages[messages.length - 1];
    if (entry.role === "assistant") {
      messages.push({ role: "assistant", content: entry.raw.content });
    } else if (entry.role === "tool") {
      const blocks = entry.results.map((r) => ({
        type: "tool_result", tool_use_id: r.id, is_error: r.isError,
        // A screenshot: its text, then the image, inside the result it answers.
        content: r.image ? [{ type: "text", text: r.content }, {
          type: "image", source: { type: "base64", media_type: r.image.mime, data: r.image.data },
        }] : r.content,
      }));
      messages.push({ role: "user", content: blocks });
    } else if (last?.role === "user") {
      const blocks = Array.isArray(last.content) ? last.content
        : [{ type: "text", text: last.content }];
      last.content = [...blocks, { type: "text", text: entry.text }];
    } else {
      messages.push({ role: "user", content: entry.text });
    }
  }
  return messages;
}

/**
 * The OpenAI Chat Completions body. OpenAI caches the longest prefix it has seen
 * on its own; what it needs is a prefix that does not move (system first, tools in
 * the same order, earlier turns byte for byte) and `prompt_cache_key`, which routes
 * a conversation's requests to the same cache.
 * @param {{model: string, maxTokens: number, tokenField: string, system: string,
 *          tools: Tool[], history: Entry[], cacheKey: string}} request
 * @returns {object}
 */
export function openaiBody({ model, maxTokens, tokenField, system, tools, history, cacheKey }) {
  return {
    model,
    [tokenField]: maxTokens,
    messages: [{ role: "system", content: system }, ...openaiMessages(history)],
    ...(tools.length ? { tools: tools.map(({ name, description, input_schema }) => ({
      type: "function",
      function: { name, description, parameters: input_schema },
    })) } : {}),
    prompt_cache_key: cacheKey,
  };
}

/** @param {Entry[]} history */
export function openaiMessages(history) {
  const messages = [];
  for (const entry of history) {
    if (entry.role === "assistant") {
      messages.push(entry.raw);
    } else if (entry.role === "tool") {
      for (const r of entry.results) {
        messages.push({
          role: "tool", tool_call_id: r.id, content: r.isError ? `Error: ${r.content}` : r.content,
        });
      }
      // A tool message holds text only: screenshots follow the calls' answers, in one
      // user message, each after a line naming the call it belongs to.
      const pictures = entry.results.filter((r) => r.image);
      if (pictures.length) {
        messages.push({ role: "user", content: pictures.flatMap((r) => [
          { type: "text", text: `The image of tool call ${r.id}:` },
          { type: "image_url", image_url: { url: `data:${r.image.mime};base64,${r.image.data}` } },
        ]) });
      }
    } else {
      messages.push({ role: "user", content: entry.text });
    }
  }
  return messages;
}

const count = (value) => (Number.isFinite(value) && value > 0 ? Math.trunc(value) : 0);

/**
 * Anthropic's usage: `input_tokens` already excludes what was read from or
 * written to the cache.
 * @param {any} usage the answer's `usage`
 * @returns {Usage}
 */
export function anthropicUsage(usage) {
  return {
    input: count(usage?.input_tokens),
    cacheRead: count(usage?.cache_read_input_tokens),
    cacheWrite: count(usage?.cache_creation_input_tokens),
    output: count(usage?.output_tokens),
  };
}

/**
 * OpenAI's usage: `prompt_tokens` includes the cached ones
 * (`prompt_tokens_details.cached_tokens`); writing the cache costs nothing extra.
 * @param {any} usage the answer's `usage`
 * @returns {Usage}
 */
export function openaiUsage(usage) {
  const prompt = count(usage?.prompt_tokens);
  const cached = Math.min(prompt, count(usage?.prompt_tokens_details?.cached_tokens));
  return { input: prompt - cached, cacheRead: cached, cacheWrite: 0,
    output: count(usage?.completion_tokens) };
}

/** All input tokens of a call, cached or not. @param {Usage} usage */
export function inputTotal(usage) {
  return usage.input + usage.cacheRead + usage.cacheWrite;
}
