import assert from "node:assert/strict";
import { test } from "node:test";
import { type ConfigOption, grouped, valueName, valuesOf } from "../src/options";

const select = (id: string, category: string | undefined, values: string[]): ConfigOption => ({
  id,
  name: id,
  category,
  type: "select",
  currentValue: values[0],
  options: values.map((value) => ({ value, name: value })),
});

test("options are grouped by category, groups in the order the agent first gives each", () => {
  const options = [
    select("provider", undefined, ["goose"]),
    select("model", "model", ["a"]),
    { id: "fast", name: "Fast", type: "boolean", currentValue: false },
    select("effort", "thought_level", ["off"]),
    select("variant", "model", ["b"]),
  ];
  assert.deepEqual(
    grouped(options).map(({ group, options }) => [group, options.map((o) => o.id)]),
    [["Other", ["provider", "fast"]], ["Model", ["model", "variant"]], ["Thinking", ["effort"]]],
  );
});

test("values in groups are offered; a boolean option is on or off", () => {
  const grouped: ConfigOption = {
    id: "model",
    category: "model",
    currentValue: "b",
    options: [{ group: "fast", name: "Fast", options: [{ value: "a", name: "A" }, { value: "b", name: "B" }] }],
  };
  assert.deepEqual(valuesOf(grouped).map((v) => v.value), ["a", "b"]);
  assert.equal(valueName(grouped, "b"), "B");
  const flag: ConfigOption = { id: "fast", type: "boolean", currentValue: true };
  assert.deepEqual(valuesOf(flag), [{ value: true, name: "on" }, { value: false, name: "off" }]);
  assert.equal(valueName(flag, false), "off");
});
