// OpenAI Chat Completions client (POST {base}/chat/completions, tool_calls), also
// used for any OpenAI-compatible server given its base URL.

import { openaiBody, openaiUsage } from "../requests.js";
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
    // Which image formula the cost meter uses (shared/cost.js imageTokens).
    this.provider = (baseUrl || OPENAI_BASE_URL) === OPENAI_BASE_URL ? "openai" : "compatible";
    this.apiKey = apiKey;
    this.model = model;
    this.baseUrl = baseUrl || OPENAI_BASE_URL;
    this.maxTokens = maxTokens;
  }

  /**
   * One model turn over the whole conversation; `cacheKey` names the conversation
   * so OpenAI routes its requests to the same prompt cache.
   * @param {{system: string, history: import("../requests.js").Entry[],
   *          tools: import("../requests.js").Tool[], cacheKey: string,
   *          signal?: AbortSignal}} request
   * @returns {Promise<import("./anthropic.js").Turn>}
   */
  async send({ system, history, tools, cacheKey, signal }) {
    const headers = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
    const data = await postJson(joinUrl(this.baseUrl, "/chat/completions"), headers,
      openaiBody({ model: this.model, maxTokens: this.maxTokens, tokenField: this.tokenField,
        system, tools, history, cacheKey }), signal);
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
    // The assistant message goes back exactly as it came (arguments as sent), so
    // the next request's prefix is byte for byte this one's.
    const raw = { role: "assistant", content: message.content ?? null };
    if (message.tool_calls?.length) raw.tool_calls = message.tool_calls;
    const text = message.content ?? "";
    return {
      text,
      toolCalls,
      stop: choice.finish_reason ?? "stop",
      usage: openaiUsage(data.usage),
      assistant: { role: "assistant", text, toolCalls, raw },
    };
  }
}
