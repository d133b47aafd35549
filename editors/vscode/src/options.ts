// Config options for the quick picks: grouped by category, in the agent's order (its
// priority). No vscode import, so it is tested under plain node.

export interface OptionValue {
  value: string | boolean;
  name?: string;
}

export interface ConfigOption {
  id: string;
  name?: string;
  category?: string;
  type?: string;
  currentValue: string | boolean;
  /** A select option's values, or groups of them (`{group, name, options}`). */
  options?: (OptionValue | { group: string; name: string; options: OptionValue[] })[];
}

/** The words for the categories ACP names; others show as they are. */
export const CATEGORIES: Record<string, string> = {
  mode: "Mode",
  model: "Model",
  model_config: "Model settings",
  thought_level: "Thinking",
};

export function groupOf(option: ConfigOption): string {
  return option.category ? (CATEGORIES[option.category] ?? option.category) : "Other";
}

/** A select option's values, those in groups too; on and off for a boolean option. */
export function valuesOf(option: ConfigOption): OptionValue[] {
  if (option.type === "boolean") return [{ value: true, name: "on" }, { value: false, name: "off" }];
  return (option.options ?? []).flatMap((entry) => ("options" in entry ? entry.options : [entry]));
}

export function valueName(option: ConfigOption, value: string | boolean): string {
  const found = valuesOf(option).find((v) => v.value === value);
  return found?.name ?? String(value);
}

/** The options by group, groups in the order the agent first gives each category. */
export function grouped(options: ConfigOption[]): { group: string; options: ConfigOption[] }[] {
  const groups = new Map<string | undefined, ConfigOption[]>();
  for (const option of options) groups.set(option.category, [...(groups.get(option.category) ?? []), option]);
  return [...groups.values()].map((members) => ({ group: groupOf(members[0]), options: members }));
}
