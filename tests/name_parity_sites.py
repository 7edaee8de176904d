"""Every place SGLang 0.5.23 compares, looks up or hands on a tool-call parser
name, as tests/name_sites_scan.py finds them, and why `X_native` equals `X`
there. tests/test_name_parity_sites.py fails when the installed SGLang has a
site this list does not (or the reverse): read the new site, decide how
`X_native` behaves there, add a probe to tests/name_parity_processes.py if
it is a new branch on a family we ship, and update both tables.

Regenerate the SITES text with `python tests/test_name_parity_sites.py`.
"""

SGLANG_VERSION = '0.5.23'

# "file | enclosing function | kind | normalized source | count"
SITES = """
api/v1/api_types.py | decode_GetModelInfoResponse | key | 'tool_call_parser' | 2
api/v1/api_types.py | encode_GetModelInfoResponse | key | 'tool_call_parser' | 1
srt/arg_groups/choices.py | <module> | literal | 'mistral' | 1
srt/arg_groups/field_order.py | <module> | key | 'tool_call_parser' | 1
srt/arg_groups/model_path_hook.py | handle_load_format | literal | 'mistral' | 1
srt/arg_groups/serving_hook.py | handle_deprecated_args | compare | cfg.tool_call_parser in deprecated_tool_call_parsers | 1
srt/arg_groups/serving_hook.py | handle_deprecated_args | literal | 'glm' | 1
srt/arg_groups/serving_hook.py | handle_deprecated_args | literal | 'glm45' | 1
srt/arg_groups/serving_hook.py | handle_deprecated_args | literal | 'qwen' | 1
srt/arg_groups/serving_hook.py | handle_deprecated_args | literal | 'qwen25' | 1
srt/arg_groups/serving_hook.py | handle_deprecated_args | lookup | deprecated_tool_call_parsers[cfg.tool_call_parser] | 2
srt/arg_groups/serving_hook.py | handle_deprecated_args | passed | declare_resolution(server_args, '_handle_deprecated_args', tool_call_parser=deprecated_tool_call_parsers[cfg.tool_call_parser]) | 1
srt/configs/iquest_q1.py | IQuestQ1Config | literal | 'iquest_q1' | 1
srt/configs/k2_horizon.py | K2HorizonConfig | literal | 'k2_horizon' | 1
srt/configs/kimi_k3.py | KimiK3Config | literal | 'kimi_k3' | 1
srt/configs/lfm2.py | <module> | literal | 'lfm2' | 1
srt/configs/load_config.py | LoadFormat | literal | 'mistral' | 1
srt/configs/nanbeige.py | NanbeigeConfig | literal | 'nanbeige' | 1
srt/configs/step3p5.py | Step3p5Config | literal | 'step3p5' | 1
srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._build_vision_config | literal | 'glm' | 1
srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._flatten_and_load_videos | literal | 'glm' | 2
srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._flatten_and_load_videos | literal | 'qwen' | 1
srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._get_mm_grid_dim | literal | 'kimi_k3' | 1
srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._grid_count_per_leaf | literal | 'kimi_k3' | 1
srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._process_image_items | literal | 'kimi_k3' | 2
srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor.get_num_tokens | literal | 'kimi_k3' | 1
srt/disaggregation/encoder/receiver.py | video_meta_attrs_for | literal | 'mimo' | 1
srt/disaggregation/encoder/runtime.py | _resolve_encoder_batch_policy | literal | 'kimi_k3' | 1
srt/disaggregation/encoder/server.py | MMEncoder._build_model_mm_items | literal | 'kimi_k3' | 1
srt/disaggregation/encoder/server.py | _build_mm_aux_data | literal | 'kimi_k3' | 1
srt/entrypoints/engine.py | Engine.get_model_info | key | 'tool_call_parser' | 2
srt/entrypoints/engine.py | init_tokenizer_manager | key | 'tool_call_parser' | 1
srt/entrypoints/grpc_bridge.py | RuntimeHandle.get_model_info | key | 'tool_call_parser' | 2
srt/entrypoints/http_server.py | _get_vlm_warmup_image_base64 | literal | 'kimi_k3' | 1
srt/entrypoints/http_server.py | model_info | key | 'tool_call_parser' | 2
srt/entrypoints/http_server.py | parse_function_call_request | passed | FunctionCallParser(tools=obj.tools, tool_call_parser=obj.tool_call_parser, tokenizer=get_global_state().tokenizer_manager.tokenizer) | 1
srt/entrypoints/http_server.py | parse_function_call_request | passed | native_text_parser(obj.tool_call_parser, chat_encoding_spec=chat.chat_encoding_spec, adapter=chat.encoding_adapter) | 1
srt/entrypoints/openai/chat_encoding.py | encode_simple_chat | literal | 'inkling' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | compare | tool_call_parser == 'deepseekv32' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | compare | tool_call_parser == 'deepseekv4' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | compare | tool_call_parser == 'deepseekv41' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | compare | tool_call_parser == 'kimi_k3' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | literal | 'deepseekv32' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | literal | 'deepseekv4' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | literal | 'deepseekv41' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | literal | 'inkling' | 1
srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec | literal | 'kimi_k3' | 3
srt/entrypoints/openai/chat_encoding.py | spec_renders_prompt_ids | literal | 'inkling' | 1
srt/entrypoints/openai/chat_encoding.py | spec_renders_prompt_ids | literal | 'kimi_k3' | 1
srt/entrypoints/openai/chat_encoding.py | spec_supports_inline_system | literal | 'kimi_k3' | 1
srt/entrypoints/openai/chat_encoding_adapters.py | <module> | literal | 'deepseekv4' | 1
srt/entrypoints/openai/chat_encoding_adapters.py | <module> | literal | 'deepseekv41' | 1
srt/entrypoints/openai/chat_encoding_adapters.py | <module> | literal | 'inkling' | 1
srt/entrypoints/openai/chat_encoding_adapters.py | _build_deepseek_recipe | passed | DeepSeekRecipeChatEncodingAdapter(chat_encoding_spec=ctx.chat_encoding_spec, tokenizer=ctx.tokenizer, reasoning_parser=ctx.reasoning_parser, tool_call_parser=ct | 1
srt/entrypoints/openai/chat_encoding_adapters.py | _build_inkling | passed | InklingChatEncodingAdapter(tokenizer=ctx.tokenizer, reasoning_parser=ctx.reasoning_parser, tool_call_parser=ctx.tool_call_parser, chat_hooks=ctx.chat_hooks) | 1
srt/entrypoints/openai/responses_tools/beam.py | BeamToolAdapter.from_request | compare | tool_call_parser not in ('beam', 'response_template') | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.__init__ | key | 'tool_call_parser' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.__init__ | literal | 'gemma4' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._apply_jinja_template | literal | 'kimi_k3' | 2
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._build_chat_encoding_adapter | passed | chat_encoding_adapters.ChatEncodingAdapterContext(chat_encoding_spec=self.chat_encoding_spec, tokenizer=self.tokenizer_manager.tokenizer, reasoning_parser=self. | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._build_chat_response | literal | 'k2_horizon' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._build_chat_response | literal | 'kimi_k3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._convert_to_internal_request | literal | 'kimi_k3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._encode_messages | literal | 'kimi_k3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._generate_chat_stream | literal | 'k2_horizon' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._get_reasoning_from_request | literal | 'hunyuan' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._get_reasoning_from_request | literal | 'iquest_q1' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._get_reasoning_from_request | literal | 'minimax-m3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._get_reasoning_from_request | literal | 'mistral' | 2
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._json_answer_structural_tag | lookup | FunctionCallParser.ToolCallParserEnum.get(self.tool_call_parser) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._json_answer_structural_tag | passed | FunctionCallParser(tools, self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._patch_reasoning_skip_special_tokens | literal | 'apertus2509' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._patch_reasoning_skip_special_tokens | literal | 'inkling' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._patch_reasoning_skip_special_tokens | literal | 'kimi_k3' | 2
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._patch_reasoning_skip_special_tokens | literal | 'mistral' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._patch_reasoning_skip_special_tokens | literal | 'muse' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | compare | self.tool_call_parser == 'glm47' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | compare | self.tool_call_parser == 'kimi_k3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | compare | self.tool_call_parser == 'muse' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | literal | 'glm47' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | literal | 'k2_horizon' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | literal | 'kimi_k3' | 3
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | literal | 'muse' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | passed | FunctionCallParser([], self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | passed | FunctionCallParser(effective_tools, self.tool_call_parser) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages | passed | FunctionCallParser(effective_tools, self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_id | compare | self.tool_call_parser != 'kimi_k2' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_id | compare | self.tool_call_parser == 'kimi_k3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_id | literal | 'kimi_k2' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_id | literal | 'kimi_k3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_stream | passed | FunctionCallParser(tools=effective_tools, tool_call_parser=self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer, prefix=request._response_parser_pr | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_stream | passed | FunctionCallParser(tools=effective_tools, tool_call_parser=self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer, tool_choice=request.tool_choice, p | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_calls | passed | FunctionCallParser(tools, self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer, tool_choice=tool_choice, prefix=response_parser_prefix, constrained | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._reported_prompt_tokens | literal | 'kimi_k3' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._requires_response_template_detokenization | lookup | FunctionCallParser.ToolCallParserEnum.get(self.tool_call_parser) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._resolve_chat_encoding_spec | passed | chat_encoding.resolve_chat_encoding_spec(hf_config=self.tokenizer_manager.model_config.hf_config, tokenizer=self.tokenizer_manager.tokenizer, tool_call_parser=s | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._settle_response_template_stop | lookup | FunctionCallParser.ToolCallParserEnum[self.tool_call_parser] | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._settle_response_template_stop | passed | tool_close_tokens(self.tool_call_parser, tokenizer) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._template_turn_grammar | lookup | FunctionCallParser.ToolCallParserEnum.get(self.tool_call_parser) | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._tool_call_parsing_active | lookup | FunctionCallParser.ToolCallParserEnum[self.tool_call_parser] | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.apply_reasoning_enabled | literal | 'hunyuan' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.apply_reasoning_enabled | literal | 'inkling' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.apply_reasoning_enabled | literal | 'iquest_q1' | 1
srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.apply_reasoning_enabled | literal | 'mistral' | 2
srt/entrypoints/openai/serving_deepseek_recipe.py | DeepSeekRecipeChatEncodingAdapter.__init__ | compare | tool_call_parser == tool_name | 1
srt/entrypoints/openai/serving_deepseek_recipe.py | DeepSeekRecipeChatEncodingAdapter.__init__ | compare | tool_call_parser not in (None, tool_name) | 1
srt/entrypoints/openai/serving_inkling.py | InklingChatEncodingAdapter.__init__ | literal | 'inkling' | 3
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._construct_input_messages | passed | self._normalize_response_message_for_chat(input_item, tool_call_parser=self.tool_call_parser) | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._is_thinking_enabled_for_request | literal | 'hunyuan' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._is_thinking_enabled_for_request | literal | 'mistral' | 2
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._normalize_response_message_for_chat | compare | tool_call_parser == 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._normalize_response_message_for_chat | literal | 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._output_items | compare | self.tool_call_parser == 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._output_items | literal | 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._parse_text_output | passed | FunctionCallParser(chat_tools, self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer, tool_choice=tool_choice, prefix=request._response_parser_prefi | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._response_tools_to_chat_tools | compare | self.tool_call_parser == 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._response_tools_to_chat_tools | literal | 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._response_tools_to_template_tools | compare | self.tool_call_parser != 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._response_tools_to_template_tools | literal | 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._responses_stream_generator_non_harmony | compare | self.tool_call_parser == 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._responses_stream_generator_non_harmony | literal | 'muse' | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._responses_stream_generator_non_harmony | passed | FunctionCallParser(chat_tools, self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer, tool_choice=tool_choice, prefix=request._response_parser_prefi | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._uses_required_tool_json | passed | FunctionCallParser(chat_tools, self.tool_call_parser, tokenizer=self.tokenizer_manager.tokenizer, tool_choice=tool_choice) | 1
srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses.create_responses | passed | BeamToolAdapter.from_request(request, tool_call_parser=self.tool_call_parser) | 1
srt/function_call/function_call_parser.py | FunctionCallParser.__init__ | lookup | self.ToolCallParserEnum.get(tool_call_parser) | 1
srt/layers/rotary_embedding/factory.py | get_rope | literal | 'llama3' | 1
srt/lora/lora.py | LoRAAdapter._normalize_shared_expert_moe | literal | 'inkling' | 1
srt/managers/detokenizer_manager.py | DetokenizerManager.init_running_status | compare | get_serving().tool_call_parser == 'gpt-oss' | 1
srt/managers/detokenizer_manager.py | DetokenizerManager.init_running_status | literal | 'gpt-oss' | 1
srt/managers/detokenizer_manager.py | DetokenizerManager.init_running_status | passed | tool_close_token_ids(get_serving().tool_call_parser, self.tokenizer) | 1
srt/models/dots3_common/dots_omni_audio.py | OmniAudioConfig.__init__ | literal | 'dots' | 1
srt/models/dots3_common/dots_omni_audio.py | OmniAudioModel.__init__ | literal | 'dots' | 1
srt/models/xllm.py | XllmForCausalLM.load_weights | literal | 'k2_horizon' | 1
srt/models/xllm.py | _validate_mova_config | literal | 'k2_horizon' | 1
srt/multimodal/processors/muse_spark_omni.py | MuseSpark1xOmniMultimodalProcessor.preprocess_fingerprint_payload | literal | 'muse' | 1
srt/parser/conversation.py | <module> | literal | 'mistral' | 1
srt/parser/hunyuan_reasoning.py | uses_hunyuan_reasoning_effort | literal | 'hunyuan' | 1
srt/parser/python_chat_template.py | <module> | literal | 'glm45' | 1
srt/parser/python_chat_template.py | <module> | literal | 'glm47' | 1
srt/parser/reasoning_parser.py | MistralDetector.__init__ | literal | 'mistral' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'apertus2509' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'cohere_command4' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'dots' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'gemma4' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'gigachat35' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'glm45' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'gpt-oss' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'hunyuan' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'inkling' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'interns1' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'iquest_q1' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'k2_horizon' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'kimi_k2' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'kimi_k3' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'ling3' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'mimo' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'minimax-m3' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'mistral' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'muse' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'nanbeige' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'poolside_v1' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'step3' | 1
srt/parser/reasoning_parser.py | ReasoningParser | literal | 'step3p5' | 1
srt/parser/reasoning_parser.py | ReasoningParser.__init__ | literal | 'gpt-oss' | 1
srt/parser/reasoning_parser.py | ReasoningParser.__init__ | literal | 'iquest_q1' | 1
srt/parser/reasoning_parser.py | ReasoningParser.__init__ | literal | 'k2_horizon' | 1
srt/parser/reasoning_parser.py | ReasoningParser.__init__ | literal | 'minimax-m3' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'apertus2509' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'cohere_command4' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'dots' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'gemma4' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'gigachat35' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'glm45' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'gpt-oss' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'hunyuan' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'inkling' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'interns1' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'iquest_q1' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'k2_horizon' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'kimi_k2' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'kimi_k3' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'ling3' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'mimo' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'minimax-m3' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'mistral' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'muse' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'nanbeige' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'poolside_v1' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'step3' | 1
srt/parser/reasoning_parser_names.py | <module> | literal | 'step3p5' | 1
srt/parser/response_template.py | tool_close_token_ids | passed | tool_close_tokens(tool_call_parser, tokenizer) | 1
srt/parser/response_template.py | tool_close_tokens | lookup | FunctionCallParser.ToolCallParserEnum.get(tool_call_parser) | 1
srt/parser/template_detection.py | <module> | literal | 'apertus2509' | 4
srt/parser/template_detection.py | <module> | literal | 'deepseekv3' | 2
srt/parser/template_detection.py | <module> | literal | 'deepseekv31' | 1
srt/parser/template_detection.py | <module> | literal | 'deepseekv32' | 1
srt/parser/template_detection.py | <module> | literal | 'deepseekv4' | 1
srt/parser/template_detection.py | <module> | literal | 'deepseekv41' | 1
srt/parser/template_detection.py | <module> | literal | 'gemma4' | 4
srt/parser/template_detection.py | <module> | literal | 'gigachat35' | 4
srt/parser/template_detection.py | <module> | literal | 'glm45' | 5
srt/parser/template_detection.py | <module> | literal | 'glm47' | 2
srt/parser/template_detection.py | <module> | literal | 'gpt-oss' | 2
srt/parser/template_detection.py | <module> | literal | 'hunyuan' | 4
srt/parser/template_detection.py | <module> | literal | 'interns1' | 4
srt/parser/template_detection.py | <module> | literal | 'iquest_q1' | 4
srt/parser/template_detection.py | <module> | literal | 'k2_horizon' | 4
srt/parser/template_detection.py | <module> | literal | 'kimi_k2' | 4
srt/parser/template_detection.py | <module> | literal | 'lfm2' | 2
srt/parser/template_detection.py | <module> | literal | 'ling3' | 4
srt/parser/template_detection.py | <module> | literal | 'mimo' | 4
srt/parser/template_detection.py | <module> | literal | 'minicpm5' | 2
srt/parser/template_detection.py | <module> | literal | 'minimax-m2' | 1
srt/parser/template_detection.py | <module> | literal | 'minimax-m3' | 2
srt/parser/template_detection.py | <module> | literal | 'mistral' | 5
srt/parser/template_detection.py | <module> | literal | 'poolside_v1' | 4
srt/parser/template_detection.py | <module> | literal | 'qwen' | 2
srt/parser/template_detection.py | <module> | literal | 'qwen3_coder' | 2
srt/parser/template_detection.py | <module> | literal | 'step3' | 4
srt/parser/template_detection.py | <module> | literal | 'step3p5' | 4
srt/parser/template_detection.py | _architecture_auto_parsers | key | 'tool_call_parser' | 1
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'deepseekv32' | 1
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'deepseekv4' | 1
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'deepseekv41' | 1
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'iquest_q1' | 2
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'kimi_k3' | 3
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'ling3' | 2
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'minimax-m2' | 1
srt/parser/template_detection.py | _architecture_auto_parsers | literal | 'minimax-m3' | 2
srt/parser/template_detection.py | _architecture_parser_defaults | key | 'tool_call_parser' | 1
srt/parser/template_detection.py | _architecture_parser_defaults | literal | 'muse' | 1
srt/parser/template_detection.py | _is_mistral | literal | 'mistral' | 1
srt/parser/template_detection.py | resolve_auto_parsers | key | 'tool_call_parser' | 5
srt/rust_server/config.py | _build_server_args | passed | ext.ServerArgs(model_path=get_model().model_path, served_model_name=get_serving().served_model_name, tokenizer_path=scheduler.rust_server_tokenizer_path(), revi | 1
srt/server_args.py | ServerArgs.add_cli_args | key | 'tool_call_parser' | 1
srt/utils/hf_transformers/common.py | <module> | literal | 'kimi_k2' | 1
srt/utils/hf_transformers/common.py | _KimiK2ConfigAlias | literal | 'kimi_k2' | 1
srt/utils/hf_transformers/common.py | get_context_length | literal | 'llama3' | 1
srt/utils/hf_transformers/config.py | <module> | literal | 'gemma4' | 1
srt/utils/hf_transformers/config.py | MistralModelConfigParser | literal | 'mistral' | 1
srt/utils/hf_transformers/config.py | get_config | literal | 'mistral' | 1
srt/utils/hf_transformers/mistral_utils.py | adapt_config_dict | literal | 'mistral' | 2
srt/utils/hf_transformers/mistral_utils.py | is_mistral_model | literal | 'mistral' | 1
"""

# "file | enclosing function" -> why X_native behaves as X there
WHY = {
    'srt/configs/step3p5.py | Step3p5Config': "'step3p5' is the HF model_type of the config class, not the tool parser",
    'srt/utils/hf_transformers/common.py | <module>': "'kimi_k2' is an HF model_type in the config registry, not the tool parser",
    'srt/utils/hf_transformers/common.py | _KimiK2ConfigAlias': "'kimi_k2' is an HF model_type alias, not the tool parser",
    'api/v1/api_types.py | decode_GetModelInfoResponse': 'model-info wire type: carries the served name (X after normalization)',
    'api/v1/api_types.py | encode_GetModelInfoResponse': 'model-info wire type: carries the served name (X after normalization)',
    'srt/arg_groups/field_order.py | <module>': 'positional field order of ServerArgs; no comparison',
    'srt/arg_groups/serving_hook.py | handle_deprecated_args': "resolution renames qwen25->qwen, glm45->glm: runs after our normalization, so X_native follows X's rename; family_builtins() installs the native class under both names (probe: resolved name + class)",
    'srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._build_vision_config': "'glm' is a model-family string for vision preprocessing, not the tool parser",
    'srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._flatten_and_load_videos': "'glm'/'qwen' are model-family strings for video preprocessing, not the tool parser",
    'srt/entrypoints/engine.py | Engine.get_model_info': 'reports the served name (X after normalization)',
    'srt/entrypoints/engine.py | init_tokenizer_manager': "'auto' resolved from the chat template to a builtin name; with SGLANG_TOOLPARSE_REPLACE=1 that name holds the native class (probe: auto)",
    'srt/entrypoints/grpc_bridge.py | RuntimeHandle.get_model_info': 'reports the served name (X after normalization)',
    'srt/entrypoints/http_server.py | model_info': 'reports the served name (X after normalization)',
    'srt/entrypoints/http_server.py | parse_function_call_request': '/parse_function_call: the REQUEST names the parser (not the server); X_native there selects our detector directly and skips the DeepSeek recipe text parser (documented in docs/SERVING.md)',
    'srt/entrypoints/openai/chat_encoding.py | resolve_chat_encoding_spec': 'DeepSeek V3.2/V4/V4.1 (and Kimi-K3) prompt encoding chosen by name before the architecture check (probe: encoding_spec)',
    'srt/entrypoints/openai/chat_encoding_adapters.py | <module>': 'ADAPTER_OUTPUT_PARSERS: the recipe owns deepseekv4/deepseekv41 output (probe: recipe_startup; docs/SERVING.md on the bypass)',
    'srt/entrypoints/openai/chat_encoding_adapters.py | _build_deepseek_recipe': 'hands the served name to the recipe adapter (probe: recipe_startup)',
    'srt/entrypoints/openai/chat_encoding_adapters.py | _build_inkling': 'hands the served name to the Inkling adapter (not a family we ship; sees X)',
    'srt/entrypoints/openai/responses_tools/beam.py | BeamToolAdapter.from_request': "compares with 'beam'/'response_template' (not families we ship; sees X)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.__init__': 'reads the served name (X after normalization; probe: served_name); '
    "its 'gemma4' is the HF model_type (is_gemma4 keeps special tokens for Gemma 4 models, whatever the tool parser)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._build_chat_encoding_adapter': 'hands the served name to the chat-encoding adapter (probe: recipe_startup)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._json_answer_structural_tag': 'detector class by name: ours under X; ResponseTemplateToolDetector subclass-ness equal (probe: response_template)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_messages': 'GLM-4.7 grammar constraint, muse/kimi_k3 branches, FunctionCallParser by name (probe: glm_constraint)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_id': "Kimi-K2 'functions.NAME:IDX' / Kimi-K3 'NAME:IDX' ids vs uuid ids (probe: tool_call_id)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_call_stream': 'FunctionCallParser by served name: our class under X (probe: detector)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._process_tool_calls': 'FunctionCallParser by served name: our class under X (probe: detector)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._requires_response_template_detokenization': 'detector class by name (probe: response_template)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._resolve_chat_encoding_spec': 'passes the served name to resolve_chat_encoding_spec (probe: encoding_spec)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._settle_response_template_stop': 'detector class by name (probe: response_template, close_tokens)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._template_turn_grammar': 'detector class by name (probe: response_template)',
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._tool_call_parsing_active': 'detector.parses_without_tools() by name (probe: parses_without_tools)',
    'srt/entrypoints/openai/serving_deepseek_recipe.py | DeepSeekRecipeChatEncodingAdapter.__init__': 'recipe start-up rule: parses output itself for its own tool parser name, refuses other names next to its reasoning parser (probe: recipe_startup)',
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._construct_input_messages': "passes the served name on for the 'muse' check (sees X)",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._normalize_response_message_for_chat': "compares with 'muse' (sees X: muse_native is served as 'muse')",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._output_items': "compares with 'muse' (sees X)",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._parse_text_output': 'FunctionCallParser by served name: our class under X (probe: detector)',
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._response_tools_to_chat_tools': "compares with 'muse' (sees X)",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._response_tools_to_template_tools': "compares with 'muse' (sees X)",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._responses_stream_generator_non_harmony': "'muse' check and FunctionCallParser by served name (probe: detector)",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._uses_required_tool_json': 'FunctionCallParser by served name (probe: detector)',
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses.create_responses': 'passes the served name to BeamToolAdapter (sees X)',
    'srt/function_call/function_call_parser.py | FunctionCallParser.__init__': 'the class lookup itself: ToolCallParserEnum[X] is ours in every process of a native server (probe: detector)',
    'srt/managers/detokenizer_manager.py | DetokenizerManager.init_running_status': 'gpt-oss check (keeps the final <|call|> token) and tool close tokens by served name, in the detokenizer process (probes: gpt_oss_detok, close_tokens)',
    'srt/parser/python_chat_template.py | <module>': "built-in Python chat templates declare builtin parser names for 'auto' (probe: auto)",
    'srt/parser/reasoning_parser.py | ReasoningParser': "'glm45', 'kimi_k3', 'gpt-oss' are reasoning-parser names, not the tool parser",
    'srt/parser/reasoning_parser_names.py | <module>': "'glm45', 'kimi_k3', 'gpt-oss' are reasoning-parser names, not the tool parser",
    'srt/parser/reasoning_parser.py | ReasoningParser.__init__': "'gpt-oss' is the reasoning-parser name (--reasoning-parser gpt-oss forces reasoning): chosen by its own flag, it pairs with gpt-oss_native as with gpt-oss (tests/test_harmony_serving.py)",
    'srt/parser/response_template.py | tool_close_token_ids': 'tool close tokens by name (probe: close_tokens)',
    'srt/parser/response_template.py | tool_close_tokens': 'detector class by name (probe: close_tokens, response_template)',
    'srt/parser/template_detection.py | <module>': "template rules that pick builtin names for 'auto' (probe: auto)",
    'srt/parser/template_detection.py | _architecture_auto_parsers': "architecture defaults for 'auto' are builtin names (probe: auto)",
    'srt/multimodal/processors/muse_spark_omni.py | MuseSpark1xOmniMultimodalProcessor.preprocess_fingerprint_payload': "'muse' is a payload key of the Muse Spark image processor, not the tool parser",
    'srt/parser/template_detection.py | _architecture_parser_defaults': 'fills a missing parser from the architecture (muse only); a _native name is never missing',
    'srt/parser/template_detection.py | resolve_auto_parsers': "'auto' detection writes a builtin name (probe: auto)",
    'srt/rust_server/config.py | _build_server_args': 'Rust server mode gets the served name X and parses with its own Rust parser: our detector is bypassed there (docs/SERVING.md)',
    'srt/server_args.py | ServerArgs.add_cli_args': '--tool-call-parser choices (the native names are accepted)',
    # Kimi K3 (kimi_k3_native, issue 23)
    'srt/configs/kimi_k3.py | KimiK3Config': "'kimi_k3' is the HF model_type of the config class, not the tool parser",
    'srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._get_mm_grid_dim': "'kimi_k3' is a model_type for image preprocessing, not the tool parser",
    'srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._grid_count_per_leaf': "'kimi_k3' is a model_type for image preprocessing, not the tool parser",
    'srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor._process_image_items': "'kimi_k3' is a model_type for image preprocessing, not the tool parser",
    'srt/disaggregation/encoder/preprocessor.py | EncoderPreprocessor.get_num_tokens': "'kimi_k3' is a model_type for image preprocessing, not the tool parser",
    'srt/disaggregation/encoder/runtime.py | _resolve_encoder_batch_policy': "'kimi_k3' is a model_type (encoder batching), not the tool parser",
    'srt/disaggregation/encoder/server.py | MMEncoder._build_model_mm_items': "'kimi_k3' is a model_type (image items), not the tool parser",
    'srt/disaggregation/encoder/server.py | _build_mm_aux_data': "'kimi_k3' is a model_type (image items), not the tool parser",
    'srt/entrypoints/http_server.py | _get_vlm_warmup_image_base64': "'kimi_k3' is a model_type (warm-up image), not the tool parser",
    'srt/entrypoints/openai/chat_encoding.py | spec_renders_prompt_ids': "compares the chat-encoding spec, resolved from the served name X (probe: encoding_spec)",
    'srt/entrypoints/openai/chat_encoding.py | spec_supports_inline_system': "compares the chat-encoding spec, resolved from the served name X (probe: encoding_spec)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._apply_jinja_template': "compares the chat-encoding spec, resolved from the served name X (probe: encoding_spec)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._build_chat_response': "compares the chat-encoding spec, resolved from the served name X (probe: encoding_spec)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._convert_to_internal_request': "compares the chat-encoding spec, resolved from the served name X (probe: encoding_spec)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._encode_messages': "compares the chat-encoding spec, resolved from the served name X (probe: encoding_spec)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._patch_reasoning_skip_special_tokens': "compares the reasoning parser name (with 'mistral' too, not the tool parser) and the chat-encoding spec (from the served name X; probe: encoding_spec)",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._reported_prompt_tokens': "compares the chat-encoding spec, resolved from the served name X (probe: encoding_spec)",
    'srt/layers/rotary_embedding/factory.py | get_rope': "'llama3' is a RoPE scaling type, not the tool parser",
    'srt/utils/hf_transformers/common.py | get_context_length': "'llama3' is a RoPE scaling type (context length), not the tool parser",
    'srt/arg_groups/choices.py | <module>': "'mistral' is a --load-format choice, not the tool parser",
    'srt/arg_groups/model_path_hook.py | handle_load_format': "'mistral' is a load format (Mistral-native checkpoints), not the tool parser",
    'srt/configs/load_config.py | LoadFormat': "'mistral' is a LoadFormat member, not the tool parser",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._get_reasoning_from_request': "'mistral' is a reasoning-toggle mode (reasoning_effort), not the tool parser",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.apply_reasoning_enabled': "'mistral' is a reasoning-toggle special case, not the tool parser",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._is_thinking_enabled_for_request': "'mistral' is a reasoning-toggle mode, not the tool parser",
    'srt/parser/conversation.py | <module>': "'mistral' is a chat-template (conversation) name, not the tool parser",
    'srt/parser/reasoning_parser.py | MistralDetector.__init__': "the reasoning detector's own name, not the tool parser",
    'srt/parser/template_detection.py | _is_mistral': "reasoning-toggle special case used by the 'auto' rules (probe: auto)",
    'srt/utils/hf_transformers/config.py | MistralModelConfigParser': "'mistral' is a model-config parser name, not the tool parser",
    'srt/utils/hf_transformers/config.py | get_config': "'mistral' is a model-config parser name, not the tool parser",
    'srt/utils/hf_transformers/mistral_utils.py | adapt_config_dict': "'mistral' is an HF model_type, not the tool parser",
    'srt/utils/hf_transformers/mistral_utils.py | is_mistral_model': "'mistral' is a checkpoint format check, not the tool parser",
    'srt/configs/iquest_q1.py | IQuestQ1Config': "'iquest_q1' is the HF model_type of the config class, not the tool parser",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._get_reasoning_from_request': "compares the REASONING parser with 'iquest_q1'/'hunyuan' (self.reasoning_parser), not the tool parser",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat.apply_reasoning_enabled': "compares the REASONING parser with 'iquest_q1'/'hunyuan', not the tool parser",
    'srt/parser/reasoning_parser.py | ReasoningParser.__init__': "'iquest_q1' is a model_type / reasoning-parser name, not the tool parser",
    'srt/entrypoints/openai/serving_responses.py | OpenAIServingResponses._is_thinking_enabled_for_request': "compares the REASONING parser with 'hunyuan', not the tool parser",
    'srt/parser/hunyuan_reasoning.py | uses_hunyuan_reasoning_effort': "'hunyuan' is the reasoning parser there (reasoning_parser == 'hunyuan'), not the tool parser",
    'srt/configs/nanbeige.py | NanbeigeConfig': "'nanbeige' is the HF model_type of the config class, not the tool parser",
    'srt/disaggregation/encoder/receiver.py | video_meta_attrs_for': "'mimo' is matched in the HF model_type for video metadata, not the tool parser",
    'srt/models/dots3_common/dots_omni_audio.py | OmniAudioConfig.__init__': "'dots' is an audio-model family string, not the tool parser",
    'srt/models/dots3_common/dots_omni_audio.py | OmniAudioModel.__init__': "'dots' is an audio-model family string, not the tool parser",
    'srt/utils/hf_transformers/config.py | <module>': "'gemma4' is an HF model_type (attention overrides), not the tool parser",
    'srt/entrypoints/openai/chat_encoding.py | encode_simple_chat': "compares the chat-encoding spec with 'inkling' (resolved from the architecture, not the tool parser)",
    'srt/entrypoints/openai/serving_inkling.py | InklingChatEncodingAdapter.__init__': "'inkling' in {reasoning parser, served tool parser}: the served name is X, so the Inkling adapter parses token ids as for the builtin (docs/SERVING.md)",
    'srt/lora/lora.py | LoRAAdapter._normalize_shared_expert_moe': "'inkling' is a model type there, not the tool parser",
    'srt/configs/lfm2.py | <module>': "'lfm2' is the HF model_type the config class is registered under, not the tool parser",
    # K2 Horizon (k2_horizon_native, issue 23)
    'srt/configs/k2_horizon.py | K2HorizonConfig': "'k2_horizon' is the HF model_type of the config class, not the tool parser",
    'srt/models/xllm.py | XllmForCausalLM.load_weights': "'k2_horizon' is an HF model_type (weight loading), not the tool parser",
    'srt/models/xllm.py | _validate_mova_config': "'k2_horizon' is an HF model_type (config check), not the tool parser",
    'srt/entrypoints/openai/serving_chat.py | OpenAIServingChat._generate_chat_stream': "compares the REASONING parser with 'k2_horizon' (self.reasoning_parser: reasoning delta kept in order), not the tool parser",
}
