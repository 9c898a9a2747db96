#!/usr/bin/env python3
"""Checks `scree preview` in a real browser: starts the preview of a scene,
opens the page in headless Chromium (Debian's chromium and chromium-driver,
driven through Selenium), waits for the refined image, moves the sun
elevation slider, waits for the image of the new sun, and saves a
screenshot before and after.

    tools/preview-check/browser.py [SCENE] [--out DIR]

Needs: apt-get install chromium chromium-driver; pip install selenium;
target/release/scree (cargo build --release). Default scene:
scenes/rocky-valley.json; screenshots go to DIR (default
target/preview-check/): before.png, after.png.
"""
import argparse
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def wait_for(driver, what, test, timeout=120):
    start = time.time()
    while time.time() - start < timeout:
        value = test()
        if value:
            return value
        time.sleep(0.2)
    sys.exit(f"browser.py: timed out waiting for {what}; status: "
             + driver.find_element(By.ID, "status").text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scene", nargs="?", default=os.path.join(ROOT, "scenes/rocky-valley.json"))
    parser.add_argument("--out", default=os.path.join(ROOT, "target/preview-check"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    scree = os.path.join(ROOT, "target/release/scree")
    server = subprocess.Popen([scree, "preview", args.scene, "--port", "0", "--width", "800"],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        url = line.split()[2]
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                     "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--window-size=1200,760"]:
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(url)
            done = lambda: "done" in driver.find_element(By.ID, "status").text
            wait_for(driver, "the refined image", done)
            # The page asked for the image when the round came; let it load.
            wait_for(driver, "the image", lambda: driver.execute_script(
                "const f = document.getElementById('frame'); return f.complete && f.naturalWidth > 0;"))
            before = driver.find_element(By.ID, "status").text
            driver.save_screenshot(os.path.join(args.out, "before.png"))
            first = driver.execute_script("return document.getElementById('frame').src")
            # Move the sun slider as a user drags it: input events on the range.
            driver.execute_script("""
                const s = document.getElementById('elevation');
                s.value = 6; s.dispatchEvent(new Event('input'));""")
            wait_for(driver, "a new image", lambda: driver.execute_script(
                "return document.getElementById('frame').src") != first and done())
            wait_for(driver, "the new image to load", lambda: driver.execute_script(
                "const f = document.getElementById('frame'); return f.complete && f.naturalWidth > 0;"))
            after = driver.find_element(By.ID, "status").text
            driver.save_screenshot(os.path.join(args.out, "after.png"))
            print(f"before: {before}\nafter:  {after}\nscreenshots in {args.out}")
        finally:
            driver.quit()
    finally:
        server.send_signal(2)
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
