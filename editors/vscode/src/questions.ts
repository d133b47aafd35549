// The agent's questions (elicitation_request): a form asked field by field with quick
// picks and input boxes, or a page to open. Decline and cancel are always offered,
// dismissing any prompt cancels, and only what the user gave is sent. No vscode import:
// the prompts are handed in, so this is unit-tested under plain node.
import { oneLine } from "./inert";

export interface Property {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: { const: unknown; title?: string }[];
  anyOf?: { const: unknown; title?: string }[];
  items?: Property;
}

export interface Question {
  requestId: string;
  message: string;
  mode: string;
  requestedSchema?: { properties?: Record<string, Property>; required?: string[] };
  url?: string;
}

export interface Answer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

export interface Item {
  label: string;
  description?: string;
  picked?: boolean;
  value?: unknown;
}

/** The prompts a form is asked with; each resolves to undefined when dismissed. */
export interface Prompts {
  pick(items: Item[], title: string): Promise<Item | undefined>;
  pickMany(items: Item[], title: string): Promise<readonly Item[] | undefined>;
  input(title: string, value: string | undefined, validate: (text: string) => string | undefined): Promise<string | undefined>;
  /** Open a web page; whether it was. */
  open(url: string): Promise<boolean>;
}

/** A property's choices: its enum or titled oneOf (its items' for a list), yes and no for a boolean. */
export function choices(prop: Property): Item[] | undefined {
  if (prop.type === "boolean") return [{ label: "yes", value: true }, { label: "no", value: false }];
  const source = prop.type === "array" ? (prop.items ?? {}) : prop;
  if (Array.isArray(source.enum)) return source.enum.map((value, i) => ({ label: oneLine(String(source.enumNames?.[i] ?? value)), value }));
  const titled = source.oneOf ?? source.anyOf;
  return Array.isArray(titled) ? titled.map((item) => ({ label: oneLine(String(item.title ?? item.const)), value: item.const })) : undefined;
}

/** Whether a property can be asked here: text, a number, a choice or several. */
export function askable(prop: Property): boolean {
  if (prop.type === "string" || prop.type === "number" || prop.type === "integer") return true;
  return (prop.type === "boolean" || prop.type === "array") && choices(prop) !== undefined;
}

/** What is wrong with text typed for a number, or undefined. */
export function numberProblem(prop: Property, text: string): string | undefined {
  if (prop.type === "integer") return /^\s*[-+]?\d+\s*$/.test(text) ? undefined : "must be an integer";
  if (prop.type === "number") return text.trim() !== "" && Number.isFinite(Number(text)) ? undefined : "must be a number";
  return undefined;
}

type Field = { value: unknown } | "skip" | "cancel";

async function askField(prompts: Prompts, name: string, prop: Property, required: boolean): Promise<Field> {
  const title = `${oneLine(prop.title ?? name)}${prop.description ? ` (${oneLine(prop.description)})` : ""}${required ? "" : ", optional"}`;
  const options = choices(prop);
  if (prop.type === "array" && options) {
    const defaults = Array.isArray(prop.default) ? prop.default : [];
    const picked = await prompts.pickMany(options.map((o) => ({ ...o, picked: defaults.includes(o.value) })), title);
    if (picked === undefined) return "cancel";
    return picked.length === 0 && !required ? "skip" : { value: picked.map((item) => item.value) };
  }
  if (options) {
    const items = options.map((o) => (o.value === prop.default ? { ...o, description: "default" } : o));
    const skip = { label: "(leave it out)" };
    const item = await prompts.pick(required ? items : [...items, skip], title);
    if (item === undefined) return "cancel";
    return item === skip ? "skip" : { value: item.value };
  }
  const validate = (text: string) => (text === "" ? (required ? "required" : undefined) : numberProblem(prop, text));
  const text = await prompts.input(title, prop.default === undefined ? undefined : String(prop.default), validate);
  if (text === undefined) return "cancel";
  if (text === "") return "skip";
  return { value: prop.type === "string" ? text : Number(text) };
}

/** Ask a question of the agent (`agent`: its name); the answer to send (cancel when any
 * prompt was dismissed). */
export async function ask(prompts: Prompts, question: Question, agent = "agent"): Promise<Answer> {
  if (question.mode === "url") {
    const url = question.url ?? "";
    const web = /^https?:\/\/\S+$/.test(url);
    const actions = web ? ["Open", "Decline", "Cancel"] : ["Decline", "Cancel"];
    const title = `${agent} asks: ${oneLine(question.message)} (${oneLine(url)}${web ? "" : ": not a web page"})`;
    const action = (await prompts.pick(actions.map((label) => ({ label })), title))?.label;
    if (action === "Open") return { action: (await prompts.open(url)) ? "accept" : "decline" };
    return { action: action === "Decline" ? "decline" : "cancel" };
  }
  const properties = question.requestedSchema?.properties ?? {};
  const required = new Set(question.requestedSchema?.required ?? []);
  const missing = [...required].filter((name) => !properties[name] || !askable(properties[name]));
  const actions = missing.length ? ["Decline", "Cancel"] : ["Answer", "Decline", "Cancel"];
  const title = `${agent} asks: ${oneLine(question.message)}${missing.length ? ` (cannot be filled in here: ${missing.join(", ")})` : ""}`;
  const action = (await prompts.pick(actions.map((label) => ({ label })), title))?.label;
  if (action !== "Answer") return { action: action === "Decline" ? "decline" : "cancel" };
  const content: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(properties)) {
    if (!askable(prop)) continue; // optional: left out
    const field = await askField(prompts, name, prop, required.has(name));
    if (field === "cancel") return { action: "cancel" };
    if (field !== "skip") content[name] = field.value;
  }
  return { action: "accept", content };
}
