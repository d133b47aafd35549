import assert from "node:assert/strict";
import { test } from "node:test";
import { ask, type Item, type Prompts, type Question } from "../src/questions";

const FORM: Question = {
  requestId: "q1",
  message: "Set up the project",
  mode: "form",
  requestedSchema: {
    properties: {
      colour: { type: "string", title: "Colour", enum: ["red", "green", "blue"], default: "red" },
      workers: { type: "integer", title: "Workers" },
      public: { type: "boolean" },
      tags: { type: "array", items: { oneOf: [{ const: "a", title: "Alpha" }, { const: "b", title: "Beta" }] }, default: ["b"] },
      note: { type: "string", title: "Note", default: "none" },
    },
    required: ["colour", "workers"],
  },
};

/** Prompts answered from a list, as a person would: a pick by label, several picks, a
 * text typed (retyped while it is refused), or "<Escape>" to dismiss. Each is recorded. */
function person(answers: (string | string[])[]): Prompts & { asked: string[]; refused: string[]; offered: Item[][] } {
  const asked: string[] = [];
  const refused: string[] = [];
  const offered: Item[][] = [];
  const next = () => answers.shift() ?? "<Escape>";
  return {
    asked,
    refused,
    offered,
    async pick(items, title) {
      asked.push(title);
      offered.push(items);
      const wanted = next();
      return items.find((item) => item.label === wanted);
    },
    async pickMany(items, title) {
      asked.push(title);
      offered.push(items);
      const wanted = next();
      return wanted === "<Escape>" ? undefined : items.filter((item) => wanted.includes(item.label));
    },
    async input(title, value, validate) {
      asked.push(`${title} [${value ?? ""}]`);
      for (;;) {
        const text = next();
        if (text === "<Escape>") return undefined;
        const problem = validate(text as string);
        if (problem === undefined) return text as string;
        refused.push(problem);
      }
    },
    async open(url) {
      asked.push(`open ${url}`);
      return url.includes("works");
    },
  };
}

test("a form is asked field by field, in its order; only what was given is sent", async () => {
  const prompts = person(["Answer", "green", "three", "", "3", "no", ["Alpha"], ""]);
  assert.deepEqual(await ask(prompts, FORM, "Claude Agent"), {
    action: "accept",
    content: { colour: "green", workers: 3, public: false, tags: ["a"] },
  });
  assert.deepEqual(prompts.asked, [
    "Claude Agent asks: Set up the project",
    "Colour",
    "Workers []",
    "public, optional",
    "tags, optional",
    "Note, optional [none]",
  ]);
  assert.deepEqual(prompts.refused, ["must be an integer", "required"], "asked again until it is one");
  assert.deepEqual(prompts.offered[0].map((i) => i.label), ["Answer", "Decline", "Cancel"]);
  assert.deepEqual(prompts.offered[1].map((i) => [i.label, i.description]), [["red", "default"], ["green", undefined], ["blue", undefined]]);
  assert.deepEqual(prompts.offered[2].map((i) => i.label), ["yes", "no", "(leave it out)"], "an optional choice can be left out");
  assert.deepEqual(prompts.offered[3].map((i) => [i.label, i.picked]), [["Alpha", false], ["Beta", true]], "defaults picked");
});

test("dismissing any prompt cancels the whole question; decline sends no content", async () => {
  assert.deepEqual(await ask(person(["Answer", "green", "<Escape>"]), FORM), { action: "cancel" });
  assert.deepEqual(await ask(person(["<Escape>"]), FORM), { action: "cancel" });
  assert.deepEqual(await ask(person(["Decline"]), FORM), { action: "decline" });
});

test("a form whose required field cannot be asked here offers only decline and cancel", async () => {
  const form: Question = { ...FORM, requestedSchema: { properties: { when: { type: "object" } }, required: ["when"] } };
  const prompts = person(["Answer"]);
  assert.deepEqual(await ask(prompts, form), { action: "cancel" });
  assert.deepEqual(prompts.offered[0].map((i) => i.label), ["Decline", "Cancel"]);
  assert.match(prompts.asked[0], /cannot be filled in here: when/);
});

test("a page is opened only when it is a web page, and accepted only when it opened", async () => {
  const page = (url: string): Question => ({ requestId: "u1", message: "Log in", mode: "url", url });
  assert.deepEqual(await ask(person(["Open"]), page("https://works.example/login")), { action: "accept" });
  assert.deepEqual(await ask(person(["Open"]), page("https://fails.example/login")), { action: "decline" });
  const local = person(["Open"]);
  assert.deepEqual(await ask(local, page("file:///etc/passwd")), { action: "cancel" });
  assert.deepEqual(local.offered[0].map((i) => i.label), ["Decline", "Cancel"]);
});
