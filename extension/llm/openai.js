// OpenAI Chat Completions client (POST {base}/chat/completions, tool_calls), also
// used for any OpenAI-compatible server given its base URL.

import { LlmError, joinUrl, postJson } from "./common.js";

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

export class OpenAIClient {
  /**
   * @param {{apiKey: string, model: string, baseUrl?: string, maxTokens?: number}} options
   *   `baseUrl` ends before `/chat/completions` (e.g. http://127.0.0.1:8080/v1)
   */
  constructor({ apiKey, model, baseUrl = OPENAI_BASE_URL, maxTokens = 4096 }) {
    // OpenAI's newer models refuse `max_tokens`; most compatible servers know only it.
    this.tokenField = (baseUrl || OPENAI_BASE_URL) === OPENAI_BASE_URL
      ? "max_completion_tokens" : "max_tokens";
    if (!model) throw new LlmError("choose a model for the OpenAI provider");
    this.apiKey = apiKey;
    this.model = model;
    this.baseUrl = baseUrl || OPENAI_BASE_URL;
    this.maxTokens = maxTokens;
  }

  /**
   * One model turn.
   * @param {{system: string, messages: object[],
   *          tools: {name: string, description: string, input_schema: object}[],
   *          signal?: AbortSignal}} request
   * @returns {Promise<import("./anthropic.js").Turn>}
   */
  async send({ system, messages, tools, signal }) {
    const headers = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
    const data = await postJson(joinUrl(this.baseUrl, "/chat/completions"), headers, {
      model: this.model,
      [this.tokenField]: this.maxTokens,
      messages: [{ role: "system", content: system }, ...messages],
      tools: tools.map(({ name, description, input_schema }) => ({
        type: "function",
        function: { name, description, parameters: input_schema },
      })),
    }, signal);
    const choice = data.choices?.[0];
    if (!choice?.message) throw new LlmError("the OpenAI answer has no choices[0].message");
    const message = choice.message;
    const toolCalls = (message.tool_calls ?? [])
      .filter((c) => c.type === undefined || c.type === "function")
      .map((c) => {
        const raw = c.function?.arguments ?? "{}";
        try {
          const args = raw.trim() ? JSON.parse(raw) : {};
          return { id: c.id, name: c.function?.name ?? "", args };
        } catch (err) {
          return { id: c.id, name: c.function?.name ?? "", args: {},
            parseError: `the arguments are not valid JSON (${err.message}): ${raw}` };
        }
      });
    const assistant = { role: "assistant", content: message.content ?? null };
    if (message.tool_calls?.length) assistant.tool_calls = message.tool_calls;
    return {
      text: message.content ?? "",
      toolCalls,
      stop: choice.finish_reason ?? "stop",
      usage: {
        input: data.usage?.prompt_tokens ?? 0,
        output: data.usage?.completion_tokens ?? 0,
      },
      assistant,
    };
  }

  /** @param {string} text */
  userMessage(text) {
    return { role: "user", content: text };
  }

  /**
   * One `tool` message per call, answering its tool_call_id.
   * @param {{id: string, content: string, isError: boolean}[]} results
   * @returns {object[]}
   */
  toolResultMessages(results) {
    return results.map((r) => ({
      role: "tool",
      tool_call_id: r.id,
      content: r.isError ? `Error: ${r.content}` : r.content,
    }));
  }
}
