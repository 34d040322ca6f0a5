/** DeviceType display names, as the official server's enum names them ([Display(Name)]). */
const DEVICE_TYPE_NAMES: Record<number, string> = {
  0: 'Android',
  1: 'iOS',
  2: 'Chrome Extension',
  3: 'Firefox Extension',
  4: 'Opera Extension',
  5: 'Edge Extension',
  6: 'Windows',
  7: 'macOS',
  8: 'Linux',
  9: 'Chrome',
  10: 'Firefox',
  11: 'Opera',
  12: 'Edge',
  13: 'Internet Explorer',
  14: 'Unknown Browser',
  15: 'Android',
  16: 'UWP',
  17: 'Safari',
  18: 'Vivaldi',
  19: 'Vivaldi Extension',
  20: 'Safari Extension',
  21: 'SDK',
  22: 'Server',
  23: 'Windows CLI',
  24: 'MacOs CLI',
  25: 'Linux CLI',
  26: 'DuckDuckGo',
};

/** A device type's display name, or undefined for a type the table does not know. */
export function deviceTypeName(type: number): string | undefined {
  return DEVICE_TYPE_NAMES[type];
}

/**
 * The official server's DeviceType enum names, in value order (0 to 26). Its token endpoint reads
 * the form's deviceType with Enum.TryParse, which takes a name as well as a number, and the
 * clients' SDK login sends the name (`deviceType=SDK`).
 */
const DEVICE_TYPE_ENUM_NAMES = [
  'Android', 'iOS', 'ChromeExtension', 'FirefoxExtension', 'OperaExtension', 'EdgeExtension', 'WindowsDesktop', 'MacOsDesktop', 'LinuxDesktop',
  'ChromeBrowser', 'FirefoxBrowser', 'OperaBrowser', 'EdgeBrowser', 'IEBrowser', 'UnknownBrowser', 'AndroidAmazon', 'UWP', 'SafariBrowser',
  'VivaldiBrowser', 'VivaldiExtension', 'SafariExtension', 'SDK', 'Server', 'WindowsCLI', 'MacOsCLI', 'LinuxCLI', 'DuckDuckGoBrowser',
];

/** A device type as a form sends it, a number (0 to 255) or an enum name; undefined when it is neither. */
export function parseDeviceType(value: string): number | undefined {
  if (/^\d{1,3}$/.test(value)) return Number(value) <= 255 ? Number(value) : undefined;
  const index = DEVICE_TYPE_ENUM_NAMES.indexOf(value);
  return index >= 0 ? index : undefined;
}
