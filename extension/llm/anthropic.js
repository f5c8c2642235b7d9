// Anthropic Messages API client (POST /v1/messages, tool_use / tool_result blocks).

import { LlmError, joinUrl, postJson } from "./common.js";

export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
const API_VERSION = "2023-06-01";

/**
 * @typedef {{id: string, name: string, args: object, parseError?: string}} ToolCall
 * @typedef {{text: string, toolCalls: ToolCall[], stop: string,
 *            usage: {input: number, output: number}, assistant: object}} Turn
 */

export class AnthropicClient {
  /**
   * @param {{apiKey: string, model: string, baseUrl?: string, maxTokens?: number}} options
   */
  constructor({ apiKey, model, baseUrl = ANTHROPIC_BASE_URL, maxTokens = 4096 }) {
    if (!model) throw new LlmError("choose a model for the Anthropic provider");
    this.apiKey = apiKey;
    this.model = model;
    this.baseUrl = baseUrl || ANTHROPIC_BASE_URL;
    this.maxTokens = maxTokens;
  }

  /**
   * One model turn.
   * @param {{system: string, messages: object[],
   *          tools: {name: string, description: string, input_schema: object}[],
   *          signal?: AbortSignal}} request
   * @returns {Promise<Turn>}
   */
  async send({ system, messages, tools, signal }) {
    const data = await postJson(joinUrl(this.baseUrl, "/v1/messages"), {
      "x-api-key": this.apiKey,
      "anthropic-version": API_VERSION,
      // Without host permission the call is a CORS request from the extension's
      // origin; Anthropic answers it only with this header.
      "anthropic-dangerous-direct-browser-access": "true",
    }, {
      model: this.model,
      max_tokens: this.maxTokens,
      system,
      messages,
      tools: tools.map(({ name, description, input_schema }) =>
        ({ name, description, input_schema })),
    }, signal);
    if (!Array.isArray(data.content)) {
      throw new LlmError("the Anthropic answer has no content list");
    }
    const text = data.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
    const toolCalls = data.content
      .filter((b) => b.type === "tool_use")
      .map((b) => ({ id: b.id, name: b.name, args: b.input ?? {} }));
    return {
      text,
      toolCalls,
      stop: data.stop_reason ?? "end_turn",
      usage: { input: data.usage?.input_tokens ?? 0, output: data.usage?.output_tokens ?? 0 },
      assistant: { role: "assistant", content: data.content },
    };
  }

  /** @param {string} text */
  userMessage(text) {
    return { role: "user", content: text };
  }

  /**
   * All tool results of one turn go back in a single user message.
   * @param {{id: string, content: string, isError: boolean}[]} results
   * @returns {object[]}
   */
  toolResultMessages(results) {
    return [{
      role: "user",
      content: results.map((r) => ({
        type: "tool_result",
        tool_use_id: r.id,
        content: r.content,
        is_error: r.isError,
      })),
    }];
  }
}
