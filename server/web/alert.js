// The turn alert: a short tone and a vibration when this seat's turn comes. Off until turned on
// (at the table's header), and remembered on this device.

import { device } from "./storage.js";

const ALERT_KEY = "dhumbal.turnAlert";

/** Whether the turn alert is on here. */
export function alertOn() {
  return device.get(ALERT_KEY) === "on";
}

/** Turns the turn alert on or off on this device. */
export function setAlert(on) {
  device.set(ALERT_KEY, on ? "on" : "off");
}

/** The page's audio, made on the tap that turns the alert on (browsers allow sound after one). */
let audio = null;

/** Makes (or wakes) the page's audio; call it from a tap. */
export function primeAudio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  try {
    if (!audio) audio = new Context();
    if (audio.state === "suspended") audio.resume().catch(() => {});
  } catch {
    audio = null;
  }
}

/** A short rising tone and a vibration, where the browser lets the page (after a first tap). */
export function turnAlert() {
  if (navigator.userActivation && !navigator.userActivation.hasBeenActive) return;
  if (typeof navigator.vibrate === "function") navigator.vibrate([90, 60, 90]);
  primeAudio();
  if (!audio) return;
  const now = audio.currentTime;
  [660, 880].forEach((pitch, i) => {
    const at = now + i * 0.16;
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.type = "sine";
    tone.frequency.value = pitch;
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(0.18, at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.14);
    tone.connect(gain).connect(audio.destination);
    tone.start(at);
    tone.stop(at + 0.15);
  });
}
