// Anthropic Messages API client (POST /v1/messages, tool_use / tool_result blocks).

import { anthropicBody, anthropicUsage } from "../requests.js";
import { LlmError, joinUrl, postJson } from "./common.js";

export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
const API_VERSION = "2023-06-01";

/**
 * @typedef {{id: string, name: string, args: object, parseError?: string}} ToolCall
 * @typedef {{text: string, toolCalls: ToolCall[], stop: string,
 *            usage: import("../requests.js").Usage,
 *            assistant: import("../requests.js").Entry}} Turn
 */

export class AnthropicClient {
  /**
   * @param {{apiKey: string, model: string, baseUrl?: string, maxTokens?: number}} options
   */
  constructor({ apiKey, model, baseUrl = ANTHROPIC_BASE_URL, maxTokens = 4096 }) {
    if (!model) throw new LlmError("choose a model for the Anthropic provider");
    this.provider = "anthropic";
    this.apiKey = apiKey;
    this.model = model;
    this.baseUrl = baseUrl || ANTHROPIC_BASE_URL;
    this.maxTokens = maxTokens;
  }

  /**
   * One model turn over the whole conversation, with cache breakpoints.
   * @param {{system: string, history: import("../requests.js").Entry[],
   *          tools: import("../requests.js").Tool[], signal?: AbortSignal}} request
   * @returns {Promise<Turn>}
   */
  async send({ system, history, tools, signal }) {
    const data = await postJson(joinUrl(this.baseUrl, "/v1/messages"), {
      "x-api-key": this.apiKey,
      "anthropic-version": API_VERSION,
      // Without host permission the call is a CORS request from the extension's
      // origin; Anthropic answers it only with this header.
      "anthropic-dangerous-direct-browser-access": "true",
    }, anthropicBody({ model: this.model, maxTokens: this.maxTokens, system, tools, history }),
    signal);
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
      usage: anthropicUsage(data.usage),
      assistant: { role: "assistant", text, toolCalls, raw: { role: "assistant", content: data.content } },
    };
  }
}
