import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { isLocalImage, Markdown } from "./Markdown";

describe("Markdown images", () => {
  it("renders a remote image as a link with its text and URL, never as an <img>", () => {
    const leak = "http://127.0.0.1:9/?leak=secret-42";
    const { container } = render(<Markdown text={`Here: ![chart](${leak}) and ![](https://evil.example/p.png)`} />);
    expect(container.querySelector("img")).toBeNull();
    const links = Array.from(container.querySelectorAll("a"));
    expect(links.map((a) => a.getAttribute("href"))).toEqual([leak, "https://evil.example/p.png"]);
    expect(links[0].textContent).toBe(`chart (${leak})`);
    expect(links[1].textContent).toBe("image (https://evil.example/p.png)");
    expect(links.every((a) => a.rel.includes("noreferrer"))).toBe(true);
  });

  it("keeps same-origin, data:image and blob: images", () => {
    const local = `${window.location.origin}/app/favicon.svg`;
    const data = "data:image/png;base64,iVBORw0KGgo=";
    const { container } = render(<Markdown text={`![a](/app/favicon.svg) ![b](${local}) ![c](${data})`} />);
    const srcs = Array.from(container.querySelectorAll("img")).map((img) => img.getAttribute("src"));
    expect(srcs).toEqual(["/app/favicon.svg", local, data]);
    expect(container.querySelector("a")).toBeNull();
  });

  it("does not let a javascript: image through as a link or an image", () => {
    const { container } = render(<Markdown text="![x](javascript:alert(1))" />);
    expect(container.querySelector("img")).toBeNull();
    expect(container.innerHTML).not.toContain("javascript:");
  });

  it("classifies URLs by origin", () => {
    const base = "http://127.0.0.1:8000/app/workspace";
    expect(isLocalImage("/x.png", base)).toBe(true);
    expect(isLocalImage("http://127.0.0.1:8000/x.png", base)).toBe(true);
    expect(isLocalImage("http://127.0.0.1:8001/x.png", base)).toBe(false);
    expect(isLocalImage("//evil.example/x.png", base)).toBe(false);
    expect(isLocalImage("blob:http://127.0.0.1:8000/1", base)).toBe(true);
  });
});
