import { assertEquals, assertThrows } from "@std/assert";
import { appDataDir } from "../../lib/app/paths.ts";

const env = (values: Record<string, string>) => (name: string) => values[name];

Deno.test("appDataDir() prefers DBPORT_HOME", () => {
  assertEquals(
    appDataDir(env({ DBPORT_HOME: "/tmp/x", HOME: "/home/u" }), "linux"),
    "/tmp/x",
  );
});

Deno.test("appDataDir() follows each platform's convention", () => {
  assertEquals(
    appDataDir(env({ HOME: "/Users/u" }), "darwin"),
    "/Users/u/Library/Application Support/dbport",
  );
  assertEquals(
    appDataDir(env({ HOME: "/home/u" }), "linux"),
    "/home/u/.config/dbport",
  );
  assertEquals(
    appDataDir(env({ HOME: "/home/u", XDG_CONFIG_HOME: "/xdg" }), "linux"),
    "/xdg/dbport",
  );
  assertEquals(
    appDataDir(env({ APPDATA: "C:\\Users\\u\\AppData\\Roaming" }), "windows"),
    "C:\\Users\\u\\AppData\\Roaming\\dbport",
  );
});

Deno.test("appDataDir() ignores a relative XDG_CONFIG_HOME, as the XDG spec says", () => {
  assertEquals(
    appDataDir(env({ HOME: "/home/u", XDG_CONFIG_HOME: "rel" }), "linux"),
    "/home/u/.config/dbport",
  );
});

Deno.test("appDataDir() names the variable to set when HOME is missing", () => {
  assertThrows(() => appDataDir(env({}), "linux"), Error, "DBPORT_HOME");
});
